package loop_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
)

// guard bounds every wait of these tests; nothing here waits on real time otherwise.
const guard = 10 * time.Second

// t0 is the harness clock's start (the same instant as brain's state tests).
var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) // a Tuesday, midday UTC

// recv returns the next value from ch, failing the test after guard.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// noProactive is the aggregation config of tests that want only user-driven wakes.
func noProactive() brain.ProactivePolicy {
	c := brain.DefaultProactivePolicy()
	c.Enabled = false
	return c
}

// proactiveAnyTime is proactive contact without quiet hours or a tight daily cap.
func proactiveAnyTime() brain.ProactivePolicy {
	c := brain.DefaultProactivePolicy()
	c.QuietHours = brain.QuietHours{}
	c.MaxPerDay = 10
	return c
}

// harness runs a Loop over fakes and the real aggregation layer.
type harness struct {
	t       *testing.T
	cfg     loop.Config
	clock   *braintest.Clock
	st      *brain.State
	agg     *recAgg
	think   *fakeThinker
	journal *fakeJournal
	sender  *fakeSender
	cmds    *fakeCommands
	store   *fakeStore
	dead    brain.DeadLetters     // optional
	reg     prometheus.Registerer // optional
	logger  *slog.Logger          // optional
	inbox   *loop.Inbox
	loop    *loop.Loop

	cancel context.CancelFunc
	errc   chan error
	done   bool
}

func newHarness(t *testing.T, agg brain.ProactivePolicy) *harness {
	return &harness{
		t:       t,
		cfg:     loop.Config{Tick: time.Hour, Apology: "sorry, try again"}, // ticks stay out of the way
		clock:   braintest.NewClock(t0),
		st:      brain.NewState(time.UTC),
		agg:     &recAgg{Aggregator: aggregation.New(agg, aggregation.Options{}), acked: make(chan brain.Ack, 64)},
		think:   newFakeThinker(),
		journal: newFakeJournal(),
		sender:  newFakeSender(),
		cmds:    &fakeCommands{},
		store:   &fakeStore{rels: map[int64]brain.Relationship{}},
	}
}

// build makes the loop (once) over the harness's fakes and config, each change applied
// to its deps in turn; change the harness's fakes and config before.
func (h *harness) build(changes ...func(*loop.Deps)) *loop.Loop {
	if h.loop == nil {
		deps := loop.Deps{
			Clock: h.clock, State: h.st, Aggregator: h.agg, Thinker: h.think, Journal: h.journal,
			Commands: h.cmds, StateStore: h.store, Registerer: h.reg, Logger: h.logger, DeadLetters: h.dead,
		}
		for _, change := range changes {
			change(&deps)
		}
		h.inbox = loop.NewInbox()
		h.loop = loop.New(h.inbox, h.sender, h.cfg, deps)
	}
	return h.loop
}

// thinking is a change for build: thinker in place of the harness's fake.
func thinking(thinker brain.Thinker) func(*loop.Deps) {
	return func(d *loop.Deps) { d.Thinker = thinker }
}

// start runs the loop until stop (or the test's end).
func (h *harness) start() {
	l := h.build()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.errc = make(chan error, 1)
	go func() { h.errc <- l.Run(ctx) }()
	h.t.Cleanup(h.stop)
}

// registry gives the loop a fresh registry (before build) and returns it.
func (h *harness) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	h.reg = reg
	return reg
}

// stop cancels Run and waits for it; after stop the state may be read.
func (h *harness) stop() {
	if h.done {
		return
	}
	h.done = true
	h.cancel()
	if err := recv(h.t, h.errc, "Run to return"); err != nil {
		h.t.Errorf("Run = %v, want nil", err)
	}
}

func (h *harness) submit(sigs ...brain.Signal) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := h.inbox.Submit(ctx, sigs...); err != nil {
		h.t.Fatalf("Submit: %v", err)
	}
}

func (h *harness) msg(id uint64, chat int64, text string) brain.Signal {
	return brain.Signal{ID: id, Type: brain.SignalUserMessage, Source: "test", Chat: chat, User: chat,
		Text: text, At: h.clock.Now()}
}

// command is a command signal from the chat's user, dated t0.
func (h *harness) command(id uint64, chat int64, text string) brain.Signal {
	return brain.Signal{ID: id, Type: brain.SignalCommand, Source: "test", Chat: chat, User: chat, Text: text, At: t0}
}

// gate holds chat's runs in the fake thinker until the channel it returns is closed (or
// sent on, a run at a time).
func (h *harness) gate(chat int64) chan struct{} {
	g := make(chan struct{})
	h.think.gateChat[chat] = g
	return g
}

// busy starts the loop with chat's first run (of message 1, text) held at its gate, and
// returns the gate (close it to let the run go on) and the run's wake.
func (h *harness) busy(chat int64, text string) (chan struct{}, brain.Wake) {
	h.t.Helper()
	g := h.gate(chat)
	h.start()
	h.submit(h.msg(1, chat, text))
	return g, recv(h.t, h.think.entered, "the first run")
}

// nudge is a signal no layer cares about: submitting it makes the loop run its layers.
func nudge() brain.Signal { return brain.Signal{Type: "nudge", Source: "test"} }

// quietRel is a relationship whose last exchange was ago.
func quietRel(chat int64, ago time.Duration) brain.Relationship {
	return brain.Relationship{Chat: chat, User: chat, LastUserMsg: t0.Add(-ago), LastAgentMsg: t0.Add(-ago),
		Status: brain.StatusIdle}
}

// advanceUntil moves the manual clock by step every few milliseconds until the sender
// sees another attempt (the loop schedules a retry only after it has taken in the failed
// one, so a single early advance could come before the retry exists).
func advanceUntil(t *testing.T, h *harness, step time.Duration, what string) brain.SendMessage {
	t.Helper()
	deadline := time.After(guard)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case m := <-h.sender.attempts:
			return m
		case <-tick.C:
			h.clock.Advance(step)
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// exposes fails the test unless reg exposes the metric name as want: its HELP, TYPE and
// series lines, exactly.
func exposes(t *testing.T, reg prometheus.Gatherer, name, want string) {
	t.Helper()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), name); err != nil {
		t.Error(err)
	}
}

// deadCount is anima_dead_letters_total{kind} in reg (-1 without that series), failing the
// test unless every kind has its series.
func deadCount(t *testing.T, reg *prometheus.Registry, kind brain.DeadKind) float64 {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, "anima_dead_letters_total")
	if err != nil || n != 3 {
		t.Fatalf("anima_dead_letters_total has %d series (%v), want one per kind from the start", n, err)
	}
	ms := braintest.Series(t, reg, "anima_dead_letters_total", "kind", string(kind))
	if len(ms) != 1 {
		return -1
	}
	return ms[0].GetCounter().GetValue()
}

// counted is the sum of the counters series finds (0 when there are none).
func counted(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	n := 0.0
	for _, m := range braintest.Series(t, reg, name, labels...) {
		n += m.GetCounter().GetValue()
	}
	return n
}
