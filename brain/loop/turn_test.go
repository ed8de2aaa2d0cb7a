package loop_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

func TestLoopThinkFailures(t *testing.T) {
	t.Parallel()
	t.Run("panic is recovered", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
			if userTexts(w) == "boom" {
				panic("thinker exploded")
			}
			return answer(w), nil
		}
		h.start()
		h.submit(h.msg(1, 7, "boom"))
		recv(t, h.think.entered, "the panicking run")
		h.submit(h.msg(2, 7, "hello"))
		h.submit(h.msg(3, 8, "other chat"))
		for range 3 {
			recv(t, h.sender.attempts, "a message")
		}
		h.stop()
		// The user who wrote is not left in silence, and the loop keeps working.
		if got, want := h.sender.SentTo(7), []string{"sorry, try again", "re: hello"}; !slices.Equal(got, want) {
			t.Errorf("chat 7 got %q, want %q", got, want)
		}
		if got := h.sender.SentTo(8); !slices.Equal(got, []string{"re: other chat"}) {
			t.Errorf("chat 8 got %q", got)
		}
		var done []uint64
		for _, r := range h.journal.Recs() {
			if r.Chat == 7 {
				done = append(done, r.Done...)
			}
		}
		if !slices.Equal(done, []uint64{1, 2}) {
			t.Errorf("chat 7 consumed %v, want [1 2]: a panicking message must not be replayed on every start", done)
		}
	})

	t.Run("error on a user message sends the apology", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.think.script = func(context.Context, brain.Wake) (brain.Outcome, error) {
			return brain.Outcome{}, errors.New("provider down")
		}
		h.start()
		in := h.msg(1, 7, "are you there?")
		in.MessageID = 55
		h.submit(in)
		m := recv(t, h.sender.attempts, "the apology")
		h.stop()
		if m.Text != "sorry, try again" || m.Kind != brain.KindSystem || !m.Plain || m.ReplyTo != 55 {
			t.Errorf("sent %+v, want the configured apology (system, plain, reply to 55)", m)
		}
		if n := len(h.sender.Sent()); n != 1 {
			t.Errorf("%d messages sent, want 1", n)
		}
		recs := h.journal.Recs()
		if len(recs) != 1 || !slices.Equal(recs[0].Done, []uint64{1}) || len(recs[0].Turns) != 1 || recs[0].Turns[0].Role != "user" {
			t.Errorf("records %+v, want one consuming signal 1 with only the user's turn", recs)
		}
	})

	t.Run("error on a proactive wake sends nothing", func(t *testing.T) {
		h := newHarness(t, proactiveAnyTime())
		h.st.Upsert(quietRel(7, 7*time.Hour))
		h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
			if w.Reason.Code == brain.ReasonProactive {
				return brain.Outcome{}, errors.New("provider down")
			}
			return answer(w), nil
		}
		h.start()
		h.submit(nudge())
		if w := recv(t, h.think.entered, "the proactive run"); w.Reason.Code != brain.ReasonProactive || w.Profile != brain.ProfileProactive {
			t.Fatalf("wake reason %q profile %q, want proactive", w.Reason.Code, w.Profile)
		}
		// A later message in the same chat runs after the failed one (per-chat order).
		h.submit(h.msg(1, 7, "hey"))
		m := recv(t, h.sender.attempts, "the reply")
		h.stop()
		if m.Text != "re: hey" {
			t.Errorf("first message sent = %+v, want the reply (nothing for the failed proactive run)", m)
		}
		if n := len(h.sender.Sent()); n != 1 {
			t.Errorf("%d messages sent, want 1", n)
		}
		rel := h.st.Rel(7)
		if !rel.LastProactive.Equal(t0) || rel.ProactiveToday != 1 || rel.UnansweredProactive != 0 {
			t.Errorf("relationship %+v: the failed wake still counts against cooldown, nothing unanswered", *rel)
		}
	})
}
