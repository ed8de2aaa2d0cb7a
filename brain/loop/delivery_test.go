package loop_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anima-bot/anima/brain"
)

func TestLoopSendFailures(t *testing.T) {
	t.Parallel()
	t.Run("blocked makes the relationship dormant", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.sender.fail = func(brain.SendMessage) error { return fmt.Errorf("telegram 403: %w", brain.ErrBlocked) }
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		recv(t, h.sender.attempts, "the send attempt")
		h.stop()
		rel := h.st.Rel(5)
		if !rel.Dormant {
			t.Error("relationship not dormant after ErrBlocked")
		}
		if !rel.LastAgentMsg.IsZero() {
			t.Errorf("LastAgentMsg = %v for an undelivered message", rel.LastAgentMsg)
		}
		if !slices.Equal(h.journal.Marked(), []uint64{101}) {
			t.Errorf("marked %v: a message to a blocked user is dropped from the outbox", h.journal.Marked())
		}
		if !h.store.rels[5].Dormant {
			t.Error("dormancy not persisted on stop")
		}
	})

	t.Run("other errors keep the entry", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.sender.fail = func(brain.SendMessage) error { return errors.New("network down") }
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		recv(t, h.sender.attempts, "the send attempt")
		h.stop()
		if m := h.journal.Marked(); len(m) != 0 {
			t.Errorf("marked %v, want nothing (the entry stays in the outbox)", m)
		}
		if rel := h.st.Rel(5); rel.Dormant || !rel.LastAgentMsg.IsZero() {
			t.Errorf("relationship %+v changed by a failed send", *rel)
		}
	})
}

func TestLoopRetriesFailedSendAfterBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond // real ticks; the backoff runs on the manual clock
	h.sender.fail = failFirst(errors.New("network down"))
	h.start()
	h.submit(h.msg(1, 5, "hi"))
	recv(t, h.sender.attempts, "the first send attempt")
	select {
	case <-h.sender.attempts:
		t.Fatal("retried before the backoff")
	case <-time.After(50 * time.Millisecond):
	}
	m := advanceUntil(t, h, 31*time.Second, "the retry after the backoff")
	if m.Text == "" {
		t.Fatal("retry sent an empty message")
	}
	h.stop()
	if got := h.sender.SentTo(5); len(got) != 1 {
		t.Errorf("delivered %q, want exactly one message", got)
	}
	if !slices.Equal(h.journal.Marked(), []uint64{101}) {
		t.Errorf("marked %v, want the retried entry", h.journal.Marked())
	}
}

func TestLoopDeliversLeftoversFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.MaxConcurrent = 1
	h.st.Upsert(quietRel(1, time.Hour))
	l := h.build()
	l.Deliver([]brain.Outgoing{
		{ID: 11, Msg: brain.SendMessage{Chat: 1, Text: "left 1", Kind: brain.KindReply}},
		{ID: 12, Msg: brain.SendMessage{Chat: 2, Text: "left 2", Kind: brain.KindReply}},
		{ID: 13, Msg: brain.SendMessage{Chat: 1, Text: "left 3", Kind: brain.KindProactive}},
	})
	h.start()
	h.submit(h.msg(1, 1, "new"))
	for range 4 {
		recv(t, h.sender.attempts, "a delivery")
	}
	h.stop()
	if got, want := h.sender.SentTo(1), []string{"left 1", "left 3", "re: new"}; !slices.Equal(got, want) {
		t.Errorf("chat 1 got %q, want %q", got, want)
	}
	if got := h.sender.SentTo(2); !slices.Equal(got, []string{"left 2"}) {
		t.Errorf("chat 2 got %q", got)
	}
	m := h.journal.Marked()
	for _, id := range []uint64{11, 12, 13} {
		if !slices.Contains(m, id) {
			t.Errorf("left-over entry %d not marked sent (marked %v)", id, m)
		}
	}
	if rel := h.st.Rel(1); !rel.LastAgentMsg.Equal(t0) {
		t.Errorf("LastAgentMsg = %v, want %v (left-overs count as sent)", rel.LastAgentMsg, t0)
	}
}

func TestLoopDropsUndeliverableAndResumesPartialSends(t *testing.T) {
	t.Parallel()
	t.Run("undeliverable is dropped, not retried", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = 5 * time.Millisecond
		h.sender.fail = func(brain.SendMessage) error { return fmt.Errorf("400 chat not found: %w", brain.ErrUndeliverable) }
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		recv(t, h.sender.attempts, "the send attempt")
		h.clock.Advance(time.Hour)
		select {
		case <-h.sender.attempts:
			t.Fatal("an undeliverable message was retried")
		case <-time.After(100 * time.Millisecond):
		}
		h.stop()
		if !slices.Equal(h.journal.Marked(), []uint64{101}) {
			t.Errorf("marked %v, want the undeliverable entry dropped from the outbox", h.journal.Marked())
		}
	})
	t.Run("a partial send resumes after the delivered parts", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = 5 * time.Millisecond
		h.sender.fail = failFirst(&brain.PartialSendError{Sent: 2, Err: errors.New("network down")})
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		if m := recv(t, h.sender.attempts, "the first attempt"); m.SkipParts != 0 {
			t.Fatalf("first attempt skips %d parts", m.SkipParts)
		}
		if m := advanceUntil(t, h, time.Minute, "the retry"); m.SkipParts != 2 {
			t.Errorf("retry skips %d parts, want the 2 delivered", m.SkipParts)
		}
		h.stop()
		h.journal.mu.Lock()
		defer h.journal.mu.Unlock()
		if m, ok := h.journal.updated[101]; !ok || m.SkipParts != 2 {
			t.Errorf("outbox entry not updated with the delivered parts: %+v", h.journal.updated)
		}
	})
	t.Run("a second partial send resumes after every part delivered", func(t *testing.T) {
		// PartialSendError.Sent counts the message's parts delivered, those skipped too.
		h := newHarness(t, noProactive())
		h.cfg.Tick = 5 * time.Millisecond
		var calls atomic.Int32
		h.sender.fail = func(brain.SendMessage) error {
			switch calls.Add(1) {
			case 1:
				return &brain.PartialSendError{Sent: 1, Err: errors.New("network down")}
			case 2:
				return &brain.PartialSendError{Sent: 2, Err: errors.New("network down")}
			}
			return nil
		}
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		recv(t, h.sender.attempts, "the first attempt")
		if m := advanceUntil(t, h, time.Minute, "the first retry"); m.SkipParts != 1 {
			t.Errorf("first retry skips %d parts, want the 1 delivered", m.SkipParts)
		}
		if m := advanceUntil(t, h, 2*time.Minute, "the second retry"); m.SkipParts != 2 {
			t.Errorf("second retry skips %d parts, want the 2 delivered (not 1+2)", m.SkipParts)
		}
		h.stop()
	})
}

func TestLoopNewRepliesQueueBehindAFailedOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	h.sender.fail = failFirst(errors.New("network down"))
	h.start()
	h.submit(h.msg(1, 5, "first"))
	recv(t, h.sender.attempts, "the failed first send")
	h.submit(h.msg(2, 5, "second"))
	select {
	case m := <-h.sender.attempts:
		t.Fatalf("%q was sent while an earlier reply waited for its retry", m.Text)
	case <-time.After(100 * time.Millisecond):
	}
	advanceUntil(t, h, 31*time.Second, "the retry")
	recv(t, h.sender.attempts, "the queued reply")
	h.stop()
	got := h.sender.SentTo(5)
	if len(got) != 2 || !strings.Contains(got[0], "first") || !strings.Contains(got[1], "second") {
		t.Errorf("delivered %q, want the replies to first and second, in that order", got)
	}
}

// TestLoopRetryKeepsRepliesQueuedDuringIt: a reply committed (queued behind) while the retry of an
// earlier one is already queued must neither be forgotten when that retry succeeds nor
// overtake it when the retry fails again.
func TestLoopRetryKeepsRepliesQueuedDuringIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		failures int32 // failed attempts of the first reply
	}{
		{"retry succeeds", 1},
		{"retry fails again", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, noProactive())
				h.cfg.Tick = 5 * time.Millisecond
				var fails atomic.Int32
				h.sender.fail = func(m brain.SendMessage) error {
					if strings.Contains(m.Text, "first") && fails.Add(1) <= tc.failures {
						return errors.New("network down")
					}
					return nil
				}
				h.think.gate = make(chan struct{}, 1)
				h.think.gate <- struct{}{} // the first run goes through
				h.start()
				h.submit(h.msg(1, 5, "first"))
				recv(t, h.sender.attempts, "the failed first send")
				h.submit(h.msg(2, 5, "second")) // its run waits at the gate
				recv(t, h.think.entered, "the first run")
				recv(t, h.think.entered, "the second run")
				h.clock.Advance(31 * time.Second)
				time.Sleep(20 * time.Millisecond) // ticks: the retry is queued behind the run
				synctest.Wait()
				h.think.gate <- struct{}{} // the second reply is committed and queued behind
				synctest.Wait()
				passMinutes(h, 20)
				h.stop()
				got := h.sender.SentTo(5)
				if len(got) != 2 || !strings.Contains(got[0], "first") || !strings.Contains(got[1], "second") {
					t.Errorf("delivered %q, want the replies to first and second, in that order", got)
				}
			})
		})
	}
}

// passMinutes moves the manual clock n minutes, one at a time, letting the loop tick and
// settle after each (in a synctest bubble, where the sleep is the bubble's fake time).
func passMinutes(h *harness, n int) {
	for range n {
		h.clock.Advance(time.Minute)
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
	}
}

// TestLoopForgetDropsPendingRetries: /forget deletes the chat's undelivered outbox entries;
// the loop must not send the ones it still holds for a retry afterwards.
func TestLoopForgetDropsPendingRetries(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = 5 * time.Millisecond
		h.cmds.forget = true
		h.sender.fail = failFirst(errors.New("network down"))
		h.start()
		h.submit(h.msg(1, 5, "my secret"))
		recv(t, h.sender.attempts, "the failed reply")
		h.submit(h.command(2, 5, "/forget yes"))
		synctest.Wait()
		passMinutes(h, 30)
		h.stop()
		if got := h.sender.SentTo(5); !slices.Equal(got, []string{"ok /forget yes"}) {
			t.Errorf("delivered %q after /forget, want only its confirmation", got)
		}
	})
}

// TestLoopRecordsOpenersOnDelivery: a first message goes into the relationship's opener
// ledger when it is delivered, with its kind, topic and when it went out; other messages
// do not.
func TestLoopRecordsOpenersOnDelivery(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.st.Upsert(quietRel(1, time.Hour))
	l := h.build()
	l.Deliver([]brain.Outgoing{
		{ID: 11, Msg: brain.SendMessage{Chat: 1, Text: "an answer", Kind: brain.KindReply}},
		{ID: 12, Msg: brain.SendMessage{Chat: 1, Text: "been listening to Coltrane", Kind: brain.KindProactive,
			Opener: brain.Opener{Kind: brain.OpenerThought, Topic: "Coltrane", Subject: "interest:jazz"}}},
	})
	h.start()
	for range 2 {
		recv(t, h.sender.attempts, "a delivery")
	}
	h.stop()
	want := []brain.Opener{{Kind: brain.OpenerThought, Topic: "Coltrane", Subject: "interest:jazz", At: t0}}
	if got := h.st.Rel(1).Openers; !slices.Equal(got, want) {
		t.Errorf("Openers = %+v, want %+v", got, want)
	}
}
