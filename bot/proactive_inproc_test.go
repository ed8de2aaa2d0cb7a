package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// proactiveNoon is where the proactive tests' manual clock starts: today's noon UTC (the
// user's default zone), far from midnight and from the night a follow-up waits out.
func proactiveNoon() time.Time {
	return time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
}

// proactiveHarness is a harness on a manual clock standing at now, whose loop ticks
// every 20 ms of real time (a step of the clock is taken in after three ticks).
func proactiveHarness(t *testing.T, now time.Time) (*harness, *braintest.Clock) {
	t.Helper()
	h := newHarness(t)
	h.cfg.Brain.Tick = config.Duration(20 * time.Millisecond)
	return h, h.useClock(now)
}

// proactiveQuiet parses quiet hours "HH:MM-HH:MM".
func proactiveQuiet(t *testing.T, s string) brain.QuietHours {
	t.Helper()
	q, err := brain.ParseQuietHours(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// proactiveClock moves a manual clock step by step and lets anima's loop take each step
// in before the next: it waits for three more of the loop's ticks (anima_ticks_total), so
// that a whole tick, rules and wakes included, has run on the new time.
type proactiveClock struct {
	t     *testing.T
	clock *braintest.Clock
	addr  string // the metrics address
	start time.Time
}

func newProactiveClock(t *testing.T, clock *braintest.Clock, addr string) *proactiveClock {
	return &proactiveClock{t: t, clock: clock, addr: addr, start: clock.Now()}
}

// counter is the value of the counter name (with label=value, if label is set) on
// /metrics, 0 while it has no sample.
func (c *proactiveClock) counter(name, label, value string) float64 {
	c.t.Helper()
	mf := scrape(c.t, c.addr)[name]
	var sum float64
	for _, m := range mf.GetMetric() {
		match := label == ""
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label && lp.GetValue() == value {
				match = true
			}
		}
		if match {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// wakes is anima_cognition_wakes_total for reason.
func (c *proactiveClock) wakes(reason string) float64 {
	return c.counter("anima_cognition_wakes_total", "reason", reason)
}

// settle waits until the loop has run a whole tick on the clock's current time.
func (c *proactiveClock) settle() {
	c.t.Helper()
	ctx := waitCtx(c.t)
	from := c.counter("anima_ticks_total", "", "")
	for c.counter("anima_ticks_total", "", "") < from+3 {
		if ctx.Err() != nil {
			c.t.Fatalf("the loop stopped ticking (at %v of the manual clock)", c.elapsed())
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// elapsed is how far the clock has moved since the test started it.
func (c *proactiveClock) elapsed() time.Duration { return c.clock.Now().Sub(c.start) }

// advance moves the clock by d in steps of step, settling after each.
func (c *proactiveClock) advance(d, step time.Duration) {
	c.t.Helper()
	for end := c.clock.Now().Add(d); c.clock.Now().Before(end); {
		c.clock.Advance(min(step, end.Sub(c.clock.Now())))
		c.settle()
	}
}

// until moves the clock in steps of step, settling after each, until cond holds or the
// clock has moved limit; it returns whether cond held.
func (c *proactiveClock) until(limit, step time.Duration, cond func() bool) bool {
	c.t.Helper()
	end := c.clock.Now().Add(limit)
	for !cond() {
		if !c.clock.Now().Before(end) {
			return false
		}
		c.clock.Advance(step)
		c.settle()
	}
	return true
}

// TestProactiveMessages: with short durations, anima writes first after the silence,
// respects the cooldown and the daily cap, and its wakes carry a reason. On the manual
// clock: a wake is timed by the clock's time at the step whose tick made it.
func TestProactiveMessages(t *testing.T) {
	t.Parallel()
	h, clock := proactiveHarness(t, proactiveNoon())
	h.ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		// A wake without a user message (anima writing first) ends with a system message.
		if last := req.Messages[len(req.Messages)-1]; last.Role == openai.ChatMessageRoleSystem {
			return openaitest.Answer(fmt.Sprintf("Thinking of you, how did the %d things go?", len(req.Messages)), "active", 0.9)
		}
		return openaitest.Echo(req)
	})
	h.cfg.Proactive.Enabled = true
	h.cfg.Proactive.MinSilence = config.Duration(3 * time.Second)
	h.cfg.Proactive.Cooldown = config.Duration(4 * time.Second)
	h.cfg.Proactive.FollowupAfter = config.Duration(2 * time.Second)
	h.cfg.Proactive.QuietHours = brain.QuietHours{}
	h.cfg.Proactive.MaxPerDay = 3
	h.cfg.Proactive.Jitter = 0
	addrs, stop := h.start()
	defer stop()
	c := newProactiveClock(t, clock, addrs.Metrics)
	const step = time.Second

	h.tg.PushText(user, user, "hi there")
	if _, err := h.tg.WaitSent(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	c.settle() // the reply's delivery is taken in at the reply's time
	replyAt := c.elapsed()
	proactive := func(n float64) func() bool { return func() bool { return c.wakes("proactive") >= n } }
	if !c.until(10*time.Second, step, proactive(1)) {
		t.Fatalf("no proactive wake within 10s of the reply on the manual clock")
	}
	first := c.elapsed()
	if _, err := h.tg.WaitSent(waitCtx(t), 2); err != nil {
		t.Fatalf("no proactive message: %v", err)
	}
	gap := first - replyAt
	t.Logf("first proactive message %v after the reply (min_silence 3s)", gap)
	if gap < 3*time.Second || gap > 10*time.Second {
		t.Errorf("first proactive message %v after the last exchange, want between min_silence and ~2×", gap)
	}
	if !c.until(30*time.Second, step, proactive(2)) {
		t.Fatalf("no second proactive wake within 30s of the first on the manual clock")
	}
	gap2 := c.elapsed() - first
	if _, err := h.tg.WaitSent(waitCtx(t), 3); err != nil {
		t.Fatalf("no second proactive message: %v", err)
	}
	t.Logf("second proactive message %v after the first (cooldown 4s, habituation 2×3s)", gap2)
	if gap2 < 4*time.Second {
		t.Errorf("second proactive message %v after the first, inside the cooldown", gap2)
	}
	// max_per_day 3, whose last wake is kept for a check-in or a follow-up: plain
	// missing-you pressure gets two, then nothing more today.
	c.advance(14*time.Second, 2*time.Second)
	if n := c.wakes("proactive"); n != 2 {
		t.Errorf("%v proactive wakes, want 2", n)
	}
	if n := len(h.tg.Sent()); n != 3 {
		t.Errorf("%d messages, want the reply and the 2 proactive ones max_per_day=3 leaves plain pressure", n)
	}
}

// TestNoProactiveInQuietHours: with quiet hours covering the whole day around now, anima
// never writes first.
func TestNoProactiveInQuietHours(t *testing.T) {
	t.Parallel()
	now := proactiveNoon()
	h, clock := proactiveHarness(t, now)
	from := now.Add(-time.Hour).Format("15:04")
	to := now.Add(time.Hour).Format("15:04")
	h.cfg.Proactive.Enabled = true
	h.cfg.Proactive.MinSilence = config.Duration(time.Second)
	h.cfg.Proactive.Cooldown = config.Duration(time.Second)
	h.cfg.Proactive.FollowupAfter = config.Duration(time.Second)
	h.cfg.Proactive.QuietHours = proactiveQuiet(t, from+"-"+to)
	h.cfg.Proactive.MaxPerDay = 5
	// No jitter: the default (1h) alone would keep anima from writing within these 6s,
	// and the test would pass without quiet hours.
	h.cfg.Proactive.Jitter = 0
	addrs, stop := h.start()
	c := newProactiveClock(t, clock, addrs.Metrics)
	h.tg.PushText(user, user, "good night")
	if _, err := h.tg.WaitSent(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	c.advance(6*time.Second, 500*time.Millisecond)
	stop()
	if n := len(h.tg.Sent()); n != 1 {
		t.Errorf("%d messages, want only the reply (quiet hours %s-%s UTC)", n, from, to)
	}
	if n := len(h.ai.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1: silence inside quiet hours must cost nothing", n)
	}
}

// TestReminderSurvivesRestart: "remind me" → core_schedule (6 s) → stop → restart on the
// same store → the reminder arrives once, about 6 s after it was set. On the manual clock,
// which stands still while anima is stopped: the reminder is timed by the clock's time at
// the step whose tick woke it.
func TestReminderSurvivesRestart(t *testing.T) {
	t.Parallel()
	h, clock := proactiveHarness(t, proactiveNoon())
	h.ai.Enqueue(
		openaitest.Tool("core_schedule", `{"note":"stretch your legs","delay_seconds":6,"at":null,"cron":null,"kind":"reminder","reason":"the user asked to be reminded"}`),
		openaitest.Answer("Sure — I'll remind you in 6 seconds.", "active", 0.95),
	)
	h.ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Answer("Time to stretch your legs!", "active", 0.95)
	})

	addrs, stop := h.start()
	h.tg.PushText(user, user, "remind me in 6 seconds to stretch my legs")
	if _, err := h.tg.WaitSent(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	newProactiveClock(t, clock, addrs.Metrics).settle()
	setAt := clock.Now()
	stop()

	addrs, stop = h.start()
	defer stop()
	c := newProactiveClock(t, clock, addrs.Metrics)
	if !c.until(15*time.Second, time.Second, func() bool { return c.wakes(brain.ReasonSchedule) >= 1 }) {
		t.Fatalf("the reminder never came within 15s of being set on the manual clock")
	}
	delay := clock.Now().Sub(setAt)
	sent, err := h.tg.WaitSent(waitCtx(t), 2)
	if err != nil {
		t.Fatalf("the reminder never came: %v", err)
	}
	t.Logf("reminder delivered %v after it was set (asked for 6s)", delay)
	if delay < 5*time.Second || delay > 15*time.Second {
		t.Errorf("reminder came %v after it was set, want about 6s", delay)
	}
	if sent[1].Visible != "Time to stretch your legs!" {
		t.Errorf("reminder = %q", sent[1].Visible)
	}
	// The wake prompt told the model what the reminder was about.
	reqs := h.ai.Requests()
	if last := string(reqs[len(reqs)-1].Raw); !strings.Contains(last, "stretch your legs") {
		t.Errorf("the reminder's prompt lacks its note:\n%s", last)
	}
	c.advance(2*time.Second, time.Second) // a second firing would come now
	stop()
	if n := len(h.tg.Sent()); n != 2 {
		t.Errorf("%d messages, want the answer and exactly one reminder", n)
	}
}
