package loop_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
)

// outageThinker is a fakeThinker whose model can be down: Think then fails with
// ErrModelUnavailable, and Outage says so.
type outageThinker struct {
	*fakeThinker
	mu   sync.Mutex
	down bool
}

var _ loop.OutageReporter = (*outageThinker)(nil)

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

// TestOutageNoticeOnceAndFold: while the model is down, a chat gets one notice; its
// messages stay uncommitted (still in the inbox) and ride along with the next run; when
// the model answers, one run answers them all and consumes them.
func TestOutageNoticeOnceAndFold(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.OutageNotice = "I'll answer as soon as I can"
	o := newOutageThinker(h)
	h.build(thinking(o))
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

// hold sends each chat a message in turn (ids from 1) while the model is down, and waits
// for its failing run and its notice: the chats are held in that order.
func hold(t *testing.T, h *harness, chats ...int64) {
	t.Helper()
	for i, chat := range chats {
		h.submit(h.msg(uint64(i+1), chat, fmt.Sprint(chat)))
		recv(t, h.think.entered, "a failing run")
		recv(t, h.sender.attempts, "a notice")
	}
}

// runOrder returns the chats of the next n runs, in the order they started.
func runOrder(t *testing.T, h *harness, n int, what string) []int64 {
	t.Helper()
	var order []int64
	for range n {
		order = append(order, recv(t, h.think.entered, what).Chat)
	}
	return order
}

// TestOutageReleasesHeldChatsInOrder: when the Thinker reports the model back, a tick
// releases every held chat, first held first, without a new message.
func TestOutageReleasesHeldChatsInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	h.cfg.MaxConcurrent = 1
	o := newOutageThinker(h)
	h.build(thinking(o))
	h.start()
	hold(t, h, 9, 4, 7)
	o.setDown(false)
	if order := runOrder(t, h, 3, "a released run"); !slices.Equal(order, []int64{9, 4, 7}) {
		t.Errorf("released in order %v, want [9 4 7] (the order they were held in)", order)
	}
}

// TestOutageReleaseQueuesBehindWaitingChats forces the interleaving that made
// TestOutageReleasesHeldChatsInOrder flaky: the last chat's failing run is still in flight
// when a tick sees the model back, so the two chats held before it are released into the
// queue for a slot; the run that then goes through releases the last chat. It must queue
// behind the chat already waiting for a slot, not take the slot the run freed.
func TestOutageReleaseQueuesBehindWaitingChats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.Tick = time.Millisecond
	h.cfg.MaxConcurrent = 1
	reg := h.registry()
	o := newOutageThinker(h)
	fail, failed, gate := h.think.script, make(chan struct{}, 1), make(chan struct{})
	h.think.script = func(ctx context.Context, w brain.Wake) (brain.Outcome, error) {
		out, err := fail(ctx, w)
		if w.Chat == 7 && err != nil {
			failed <- struct{}{}
			<-gate // the failure reaches the loop only after the model is back
		}
		return out, err
	}
	h.build(thinking(o))
	h.start()
	hold(t, h, 9, 4)
	h.submit(h.msg(3, 7, "7"))
	recv(t, h.think.entered, "7's run")
	recv(t, failed, "7's run to fail")
	o.setDown(false)
	// A whole tick sees the model back while 7's run holds the only slot: 9 and 4 wait
	// for it.
	n := ticks(t, reg)
	until(t, time.Now().Add(guard), "the loop stopped ticking", func() bool { return ticks(t, reg) >= n+2 })
	close(gate)
	recv(t, h.sender.attempts, "7's notice")
	if order := runOrder(t, h, 3, "a released run"); !slices.Equal(order, []int64{9, 4, 7}) {
		t.Errorf("released in order %v, want [9 4 7] (the order they were held in)", order)
	}
}

// TestOutageReleaseDoesNotJumpWaitingChats: chats released when a run finds the model
// back queue for a slot behind the chats already waiting for one, in the order they were
// held; none takes the slot the run freed ahead of them.
func TestOutageReleaseDoesNotJumpWaitingChats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.MaxConcurrent = 1
	reg := h.registry()
	o := newOutageThinker(h)
	gate := h.gate(5)
	h.build(thinking(o))
	h.start()
	hold(t, h, 9, 4)
	o.setDown(false)
	h.submit(h.msg(3, 5, "5"))
	recv(t, h.think.entered, "5's run") // 9 and 4 are held: 5's run started after 4's ended
	h.submit(h.msg(4, 6, "6"))
	// 6's wake is dispatched (in the same step as it is counted) and waits for 5's slot.
	until(t, time.Now().Add(guard), "6's message never woke the loop", func() bool { return wakes(t, reg) >= 4 })
	close(gate) // 5's run goes through: the model is back, 9 and 4 are released
	if order := runOrder(t, h, 3, "a run after 5's"); !slices.Equal(order, []int64{6, 9, 4}) {
		t.Errorf("runs after 5's in order %v, want [6 9 4] (6 waited for the slot first; 9 and 4 in the order held)", order)
	}
}

// wakes is the Stepper's anima_cognition_wakes_total in reg, over every reason.
func wakes(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	return counted(t, reg, "anima_cognition_wakes_total")
}

// TestOutageDropsAfterMaxHold: messages held longer than MaxHold are consumed unanswered,
// logged and counted.
func TestOutageDropsAfterMaxHold(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	reg := h.registry()
	if rec := expireHold(t, h, "too old"); !slices.Equal(rec.Done, []uint64{1}) || len(rec.Turns)+len(rec.Outbox) != 0 {
		t.Fatalf("drop commit = %+v, want only the inbox entry consumed", rec)
	}
	if got := counted(t, reg, "anima_held_messages_dropped_total"); got != 1 {
		t.Errorf("anima_held_messages_dropped_total = %v, want 1", got)
	}
}

// expireHold holds one message of chat 5 (id 1) while the model is down, past a MaxHold of
// an hour with no retries in the way, and returns the commit that drops it; the loop is
// stopped after.
func expireHold(t *testing.T, h *harness, text string) brain.TurnRecord {
	t.Helper()
	h.cfg.MaxHold = time.Hour
	h.cfg.HoldRetry = 1000 * time.Hour
	h.build(thinking(newOutageThinker(h)))
	h.start()
	h.submit(h.msg(1, 5, text))
	recv(t, h.sender.attempts, "the notice")
	recv(t, h.journal.commits, "the notice's commit")
	h.clock.Advance(2 * time.Hour)
	rec := recv(t, h.journal.commits, "the drop")
	h.stop()
	return rec
}

// gapThinker is a fakeThinker behind a circuit breaker like cognition's: while open, a
// run may send one probe once gap has passed since the last failed probe, and fails fast
// otherwise; a probe succeeds once the model is back, closing the breaker.
type gapThinker struct {
	*fakeThinker
	clock  *braintest.Clock
	gap    time.Duration
	probes chan time.Time // when each probe went out

	mu      sync.Mutex
	open    bool
	back    bool
	lastTry time.Time
}

var _ loop.OutageReporter = (*gapThinker)(nil)

func newGapThinker(h *harness) *gapThinker {
	g := &gapThinker{fakeThinker: h.think, clock: h.clock, gap: 5 * time.Second, probes: make(chan time.Time, 1024),
		open: true, lastTry: t0.Add(-time.Hour)}
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		if !g.probe() {
			return brain.Outcome{}, fmt.Errorf("think: %w", brain.ErrModelUnavailable)
		}
		return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: "answer to " + texts(w), Kind: brain.KindReply}}}, nil
	}
	return g
}

// probe reports whether a request got through: the breaker is closed, or a probe was
// allowed and the model is back.
func (g *gapThinker) probe() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.open {
		return true
	}
	now := g.clock.Now()
	if now.Sub(g.lastTry) < g.gap {
		return false // fails fast: no probe
	}
	g.probes <- now
	if g.back {
		g.open = false
		return true
	}
	g.lastTry = now
	return false
}

func (g *gapThinker) setBack() { g.mu.Lock(); g.back = true; g.mu.Unlock() }

func (g *gapThinker) Outage() (time.Time, bool) { g.mu.Lock(); defer g.mu.Unlock(); return t0, g.open }

// TestOutageProbesWhenTheGapEnds: a user who writes again inside the probe gap gets no
// probe then, but one as the gap ends: with the model back meanwhile, the held messages
// are answered within one probe interval of its return, not after a long hold retry.
func TestOutageProbesWhenTheGapEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	g := newGapThinker(h)
	h.build(thinking(g))
	h.start()
	h.submit(h.msg(1, 5, "a"))
	recv(t, g.probes, "the first message's probe")
	recv(t, h.sender.attempts, "the notice")
	recv(t, h.journal.commits, "the notice's commit")
	h.clock.Advance(2 * time.Second)
	h.submit(h.msg(2, 5, "b"))
	recv(t, h.think.entered, "the first run")
	if w := recv(t, h.think.entered, "the second message's run"); texts(w) != "[a b]" {
		t.Fatalf("second run = %s, want both messages", texts(w))
	}
	h.clock.Advance(time.Second)
	g.setBack()
	back := h.clock.Now()
	m := advanceUntil(t, h, 250*time.Millisecond, "the held answer")
	took := h.clock.Now().Sub(back)
	t.Logf("held messages answered %v (fake clock) after the model came back", took)
	if m.Text != "answer to [a b]" {
		t.Errorf("answer = %q", m.Text)
	}
	if took > 5*time.Second {
		t.Errorf("the held answer came %v after the model was back, want within one probe interval (5s)", took)
	}
}

// TestOutageProbeBackoff: while the model stays down, the held chat probes every 5 s for
// the first minute of the hold, then at doubling intervals up to 60 s.
func TestOutageProbeBackoff(t *testing.T) {
	t.Parallel()
	var held time.Time
	var probes []time.Time
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = time.Millisecond
		g := newGapThinker(h)
		h.build(thinking(g))
		h.start()
		h.submit(h.msg(1, 5, "a"))
		held = recv(t, g.probes, "the first probe")
		recv(t, h.sender.attempts, "the notice")
		synctest.Wait() // the failed run is taken in: the chat is held from held
		for h.clock.Now().Sub(held) < 5*time.Minute {
			// Each second of the manual clock is seen by five ticks of the loop (5 ms of
			// the bubble's time), and a run they started has ended and been taken in
			// (everything in the bubble waits), before the next.
			h.clock.Advance(time.Second)
			time.Sleep(5 * time.Millisecond)
			synctest.Wait()
			for len(g.probes) > 0 {
				probes = append(probes, <-g.probes)
			}
		}
		h.stop()
	})
	gaps := braintest.Gaps(held, probes)
	t.Logf("probe gaps over 5 minutes: %v", gaps)
	want := []time.Duration{}
	for range 12 {
		want = append(want, 5*time.Second)
	}
	want = append(want, 10*time.Second, 20*time.Second, 40*time.Second, 60*time.Second, 60*time.Second)
	if len(gaps) < len(want) {
		t.Fatalf("%d probes in 5 minutes, want at least %d", len(gaps), len(want))
	}
	for i, w := range want {
		if gaps[i] != w {
			t.Errorf("gap %d = %v, want %v", i, gaps[i], w)
		}
	}
	for i, gp := range gaps {
		if gp > 60*time.Second {
			t.Errorf("gap %d = %v, want at most 60s", i, gp)
		}
	}
}

// pollEvery is how often until looks: a quarter of the 1 ms tick these tests run at.
const pollEvery = 250 * time.Microsecond

// until waits for cond, looking every pollEvery, and fails the test with msg at deadline.
// It polls rather than spins (runtime.Gosched between looks kept a core busy gathering
// the registry), so the loop under test has the CPU between looks.
func until(t *testing.T, deadline time.Time, msg string, cond func() bool) {
	t.Helper()
	tk := time.NewTicker(pollEvery)
	defer tk.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		<-tk.C
	}
}

// ticks is the loop's anima_ticks_total in reg.
func ticks(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	return counted(t, reg, "anima_ticks_total")
}

// TestOutageRetryNotStuckBehindOneChat: a retry whose run does not end (a probe that
// hangs) holds the other held chats' retries back for at most HoldRetryMax.
func TestOutageRetryNotStuckBehindOneChat(t *testing.T) {
	t.Parallel()
	const a, b = 5, 6
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = time.Millisecond
		hang := make(chan struct{}, 1)
		hang <- struct{}{} // a's first run goes through to the breaker; its retry hangs
		h.think.gateChat[a] = hang
		g := newGapThinker(h)
		h.build(thinking(g))
		h.start()
		h.submit(h.msg(1, a, "a"))
		held := recv(t, g.probes, "a's probe")
		recv(t, h.sender.attempts, "a's notice")
		h.submit(h.msg(2, b, "b"))
		recv(t, h.sender.attempts, "b's notice") // b's run failed fast, inside the probe gap
		synctest.Wait()
		for len(g.probes) == 0 {
			if h.clock.Now().Sub(held) > 2*time.Minute {
				t.Fatal("no probe for b within two minutes while a's retry hangs")
			}
			// Three ticks of the loop (3 ms of the bubble's time) see each second of the
			// manual clock, and all they started has been taken in, before the next.
			h.clock.Advance(time.Second)
			time.Sleep(3 * time.Millisecond)
			synctest.Wait()
		}
		w := h.think.Wakes()
		if last := w[len(w)-1]; last.Chat != b {
			t.Fatalf("the probe was chat %d's, want b's", last.Chat)
		}
		// a's retry went out 5 s after the hold; b's may follow HoldRetryMax (60 s) after it.
		took := (<-g.probes).Sub(held)
		t.Logf("b's probe came %v after the hold", took)
		if took > 65*time.Second {
			t.Errorf("b's probe came %v after the hold, want at most 65s", took)
		}
		h.stop() // ends a's hanging run
	})
}
