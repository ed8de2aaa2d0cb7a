package loop_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

func TestLoopAnswersUserMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		h.clock.Advance(30 * time.Second) // thinking takes time
		return answer(w), nil
	}
	h.start()
	h.submit(h.msg(1, 100, "hi"))
	got := recv(t, h.sender.attempts, "the reply")
	h.stop()

	if want := (brain.SendMessage{Chat: 100, Text: "re: hi", Kind: brain.KindReply}); got.Chat != want.Chat ||
		got.Text != want.Text || got.Kind != want.Kind {
		t.Errorf("sent %+v, want %+v", got, want)
	}
	wakes := h.think.Wakes()
	if len(wakes) != 1 {
		t.Fatalf("Think called %d times, want 1", len(wakes))
	}
	w := wakes[0]
	if w.Reason.Code != brain.ReasonUserMessage || w.Profile != brain.ProfileChat || w.Chat != 100 || w.User != 100 {
		t.Errorf("wake = chat %d user %d reason %q profile %q", w.Chat, w.User, w.Reason.Code, w.Profile)
	}
	if ids := signalIDs(w); !slices.Equal(ids, []uint64{1}) {
		t.Errorf("wake signals %v, want [1]", ids)
	}
	if !w.Rel.LastUserMsg.Equal(t0) {
		t.Errorf("wake's relationship snapshot LastUserMsg = %v, want %v", w.Rel.LastUserMsg, t0)
	}

	recs := h.journal.Recs()
	if len(recs) != 1 {
		t.Fatalf("%d turn records, want 1", len(recs))
	}
	rec := recs[0]
	if !slices.Equal(rec.Done, []uint64{1}) || rec.Chat != 100 || rec.User != 100 {
		t.Errorf("record done %v chat %d user %d", rec.Done, rec.Chat, rec.User)
	}
	wantTurns := []brain.Turn{
		{Role: "user", Text: "hi", At: t0},
		{Role: "assistant", Text: "re: hi", At: t0.Add(30 * time.Second), Kind: brain.KindReply},
	}
	if len(rec.Turns) != len(wantTurns) {
		t.Fatalf("turns %+v, want %+v", rec.Turns, wantTurns)
	}
	for i := range wantTurns {
		g, w := rec.Turns[i], wantTurns[i]
		if g.Role != w.Role || g.Text != w.Text || !g.At.Equal(w.At) || g.Kind != w.Kind {
			t.Errorf("turn %d = %+v, want %+v", i, g, w)
		}
	}
	if len(rec.Outbox) != 1 || rec.Rel != nil {
		t.Errorf("outbox %+v rel %v, want one message and no relationship", rec.Outbox, rec.Rel)
	}
	if m := h.journal.Marked(); !slices.Equal(m, []uint64{101}) {
		t.Errorf("marked sent %v, want [101]", m)
	}

	rel := h.st.Rel(100)
	if rel == nil {
		t.Fatal("no relationship for chat 100")
	}
	if !rel.LastUserMsg.Equal(t0) || !rel.LastAgentMsg.Equal(t0.Add(30*time.Second)) || rel.Status != brain.StatusActive {
		t.Errorf("relationship: user %v agent %v status %q", rel.LastUserMsg, rel.LastAgentMsg, rel.Status)
	}
	saved, ok := h.store.rels[100]
	if !ok || !saved.LastAgentMsg.Equal(rel.LastAgentMsg) {
		t.Errorf("stopping did not persist the relationship: %+v (saved %v)", saved, ok)
	}
}

func TestLoopStopPersistsAndIsBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.StopGrace = 3 * time.Second
		h.think.gate = make(chan struct{}) // never released: the run ends only with its context
		h.start()
		h.submit(h.msg(1, 4, "hi"))
		recv(t, h.think.entered, "the run")

		start := time.Now()
		h.stop()
		if took := time.Since(start); took != h.cfg.StopGrace {
			t.Errorf("stop took %v, want the grace %v", took, h.cfg.StopGrace)
		}
		h.think.mu.Lock()
		canceled := h.think.canceled
		h.think.mu.Unlock()
		if canceled != 1 {
			t.Errorf("%d runs saw their context end, want 1", canceled)
		}
		if recs := h.journal.Recs(); len(recs) != 0 {
			t.Errorf("an interrupted run committed %+v; its signals must stay in the inbox", recs)
		}
		if rel, ok := h.store.rels[4]; !ok || !rel.LastUserMsg.Equal(t0) {
			t.Errorf("relationship not flushed on stop: %+v %v", rel, ok)
		}
		if h.store.ackSave == 0 {
			t.Error("acks not flushed on stop")
		}
	})
}

// TestLoopStopStartsNoNewRuns: once Run is stopping, a run that finishes must not start the
// chat's next queued job (it would outlive Run or race the WaitGroup).
func TestLoopStopStartsNoNewRuns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.StopGrace = time.Minute
		gate, _ := h.busy(4, "one")
		h.submit(h.msg(2, 4, "two")) // queued behind the first run
		synctest.Wait()

		h.cancel()
		synctest.Wait() // Run is now stopping, waiting for the run in flight
		gate <- struct{}{}
		synctest.Wait()
		h.stop()

		if n := len(h.think.Wakes()); n != 1 {
			t.Errorf("Think called %d times, want 1: a queued run started while stopping", n)
		}
		if got := h.sender.SentTo(4); !slices.Equal(got, []string{"re: one"}) {
			t.Errorf("sent %q, want only the first reply", got)
		}
		var done []uint64
		for _, r := range h.journal.Recs() {
			done = append(done, r.Done...)
		}
		if !slices.Equal(done, []uint64{1}) {
			t.Errorf("consumed %v, want [1] (signal 2 stays in the inbox for the next start)", done)
		}
	})
}

// TestLoopStopWithManyRunsInFlight: with more runs in flight than the result buffer
// holds, the runs cancelled at the end of the stop grace must still report back.
func TestLoopStopWithManyRunsInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const chats = 100
		h := newHarness(t, noProactive())
		h.cfg.MaxConcurrent = chats
		h.cfg.StopGrace = 3 * time.Second
		h.think.gate = make(chan struct{}) // never released
		h.start()
		for c := range chats {
			h.submit(h.msg(uint64(c+1), int64(c+1), "hi"))
		}
		for range chats {
			recv(t, h.think.entered, "a run")
		}
		start := time.Now()
		h.stop()
		if took := time.Since(start); took != h.cfg.StopGrace {
			t.Errorf("stop took %v, want the grace %v", took, h.cfg.StopGrace)
		}
	})
}

// TestNewNeedsInboxAndSender: a loop that could not take signals in or deliver
// messages is refused when it is built, not found out when it first sends.
func TestNewNeedsInboxAndSender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		inbox *loop.Inbox
		send  loop.Sender
	}{
		{"no sender", loop.NewInbox(), nil},
		{"no inbox", nil, newFakeSender()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New did not refuse")
				}
			}()
			loop.New(tc.inbox, tc.send, loop.Config{}, loop.Deps{})
		})
	}
}

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
