package brain_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// outageThinker is a fakeThinker whose model can be down: Think then fails with
// ErrModelUnavailable, and Outage says so.
type outageThinker struct {
	*fakeThinker
	mu   sync.Mutex
	down bool
}

var _ brain.OutageReporter = (*outageThinker)(nil)

func newOutageThinker(h *harness) *outageThinker {
	o := &outageThinker{fakeThinker: h.think, down: true}
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		if o.isDown() {
			return brain.Outcome{}, fmt.Errorf("think: %w", brain.ErrModelUnavailable)
		}
		return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: "answer to " + texts(w), Kind: brain.KindReply}}}, nil
	}
	return o
}

func (o *outageThinker) isDown() bool { o.mu.Lock(); defer o.mu.Unlock(); return o.down }

func (o *outageThinker) setDown(d bool) { o.mu.Lock(); o.down = d; o.mu.Unlock() }

func (o *outageThinker) Outage() (time.Time, bool) { return t0, o.isDown() }

func texts(w brain.Wake) string {
	var out []string
	for _, s := range w.Signals {
		out = append(out, s.Text)
	}
	return fmt.Sprint(out)
}

// buildWith makes the loop with thinker in place of the harness's fake.
func buildWith(h *harness, thinker brain.Thinker) {
	h.inbox = brain.NewInbox()
	h.loop = brain.NewCoreLoop(h.inbox, h.sender, h.cfg, brain.LoopDeps{
		Clock: h.clock, State: h.st, Aggregator: h.agg, Thinker: thinker, Journal: h.journal,
		Commands: h.cmds, StateStore: h.store, Registerer: h.reg, Logger: h.logger, DeadLetters: h.dead,
	})
}

// TestOutageNoticeOnceAndFold: while the model is down, a chat gets one notice; its
// messages stay uncommitted (still in the inbox) and ride along with the next run; when
// the model answers, one run answers them all and consumes them.
func TestOutageNoticeOnceAndFold(t *testing.T) {
	h := newHarness(t, noProactive())
	h.cfg.OutageNotice = "I'll answer as soon as I can"
	o := newOutageThinker(h)
	buildWith(h, o)
	h.start()

	h.submit(h.msg(1, 5, "a"))
	if w := recv(t, h.think.entered, "first run"); texts(w) != "[a]" {
		t.Fatalf("first run = %s", texts(w))
	}
	if m := recv(t, h.sender.attempts, "the notice"); m.Text != h.cfg.OutageNotice || m.Kind != brain.KindSystem {
		t.Fatalf("first message = %+v, want the notice", m)
	}
	if rec := recv(t, h.journal.commits, "the notice's commit"); len(rec.Done) != 0 || len(rec.Turns) != 0 {
		t.Fatalf("the notice's commit consumed %v and recorded %d turns; the messages must stay in the inbox", rec.Done, len(rec.Turns))
	}
	h.submit(h.msg(2, 5, "b"))
	if w := recv(t, h.think.entered, "second run"); texts(w) != "[a b]" {
		t.Fatalf("second run = %s, want the held message first", texts(w))
	}
	o.setDown(false)
	h.submit(h.msg(3, 5, "c"))
	if w := recv(t, h.think.entered, "third run"); texts(w) != "[a b c]" {
		t.Fatalf("third run = %s", texts(w))
	}
	if m := recv(t, h.sender.attempts, "the answer"); m.Text != "answer to [a b c]" {
		t.Fatalf("answer = %q", m.Text)
	}
	h.stop()
	var done []uint64
	for _, rec := range h.journal.recs {
		done = append(done, rec.Done...)
	}
	slices.Sort(done)
	if !slices.Equal(done, []uint64{1, 2, 3}) {
		t.Errorf("consumed inbox entries = %v, want [1 2 3] (each once)", done)
	}
	if n := len(h.sender.sent); n != 2 {
		t.Errorf("%d messages sent, want the notice and one answer", n)
	}
}

// TestOutageReleasesHeldChatsInOrder: when the Thinker reports the model back, a tick
// releases every held chat, first held first, without a new message.
func TestOutageReleasesHeldChatsInOrder(t *testing.T) {
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	h.cfg.MaxConcurrent = 1
	o := newOutageThinker(h)
	buildWith(h, o)
	h.start()
	for i, chat := range []int64{9, 4, 7} {
		h.submit(h.msg(uint64(i+1), chat, fmt.Sprint(chat)))
		recv(t, h.think.entered, "a failing run")
		recv(t, h.sender.attempts, "a notice")
	}
	o.setDown(false)
	var order []int64
	for range 3 {
		order = append(order, recv(t, h.think.entered, "a released run").Chat)
	}
	if !slices.Equal(order, []int64{9, 4, 7}) {
		t.Errorf("released in order %v, want [9 4 7] (the order they were held in)", order)
	}
}

// TestOutageDropsAfterMaxHold: messages held longer than MaxHold are consumed unanswered,
// logged and counted.
func TestOutageDropsAfterMaxHold(t *testing.T) {
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	h.cfg.MaxHold = time.Hour
	h.cfg.HoldRetry = 1000 * time.Hour // no retries in the way
	reg := prometheus.NewRegistry()
	h.reg = reg
	o := newOutageThinker(h)
	buildWith(h, o)
	h.start()
	h.submit(h.msg(1, 5, "too old"))
	recv(t, h.sender.attempts, "the notice")
	recv(t, h.journal.commits, "the notice's commit")
	h.clock.Advance(2 * time.Hour)
	rec := recv(t, h.journal.commits, "the drop")
	if !slices.Equal(rec.Done, []uint64{1}) || len(rec.Turns)+len(rec.Outbox) != 0 {
		t.Fatalf("drop commit = %+v, want only the inbox entry consumed", rec)
	}
	h.stop()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := -1.0
	for _, mf := range mfs {
		if mf.GetName() == "anima_held_messages_dropped_total" {
			got = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if got != 1 {
		t.Errorf("anima_held_messages_dropped_total = %v, want 1", got)
	}
}
