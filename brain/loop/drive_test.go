package loop_test

import (
	"context"
	"testing"

	"github.com/anima-bot/anima/brain"
)

// TestDriveRunsTheTickToTheEnd: Drive returns only once every job its tick started has
// been thought, committed, delivered and booked, and the jobs queued behind them too,
// so a simulation reads the outcome at once, without Run or any wait.
func TestDriveRunsTheTickToTheEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	l := h.build()
	now := h.clock.Now()
	l.Drive(context.Background(), now, []brain.Signal{h.msg(1, 7, "hi"), h.msg(2, 8, "hello")})
	for chat, want := range map[int64]string{7: "re: hi", 8: "re: hello"} {
		if got := h.sender.SentTo(chat); len(got) != 1 || got[0] != want {
			t.Errorf("chat %d got %q, want [%q]", chat, got, want)
		}
		if rel := h.st.Rel(chat); rel == nil || !rel.LastAgentMsg.Equal(now) || rel.Status != brain.StatusActive {
			t.Errorf("chat %d: relationship %+v, want the reply booked at %v with its status", chat, rel, now)
		}
	}
	if n := len(h.journal.Recs()); n != 2 {
		t.Errorf("%d turns committed, want 2", n)
	}
	if n := len(h.journal.Marked()); n != 2 {
		t.Errorf("%d outbox entries marked sent, want 2", n)
	}
	if h.st.LLMWork != 2 {
		t.Errorf("LLMWork = %d, want the 2 runs counted", h.st.LLMWork)
	}
}
