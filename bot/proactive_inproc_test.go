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

// proactiveHarness is a harness on a manual clock standing at now, whose loop ticks
// every 20 ms of real time (a step of the clock is taken in after three ticks).
func proactiveHarness(t *testing.T, now time.Time) (*harness, *braintest.Clock) {
	t.Helper()
	h := newHarness(t)
	h.cfg.Brain.Tick = config.Duration(20 * time.Millisecond)
	return h, h.useClock(now)
}

// proactiveFast is proactive contact in seconds: min_silence 3 s, cooldown 4 s, a
// follow-up after 2 s, no quiet hours, no jitter, max_per_day 3.
func proactiveFast(h *harness) {
	h.cfg.Proactive.Enabled = true
	h.cfg.Proactive.MinSilence = config.Duration(3 * time.Second)
	h.cfg.Proactive.Cooldown = config.Duration(4 * time.Second)
	h.cfg.Proactive.FollowupAfter = config.Duration(2 * time.Second)
	h.cfg.Proactive.QuietHours = brain.QuietHours{}
	h.cfg.Proactive.MaxPerDay = 3
	h.cfg.Proactive.Jitter = 0
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
}

// newProactiveClock steps clock for the anima whose metrics listen on addr.
func newProactiveClock(t *testing.T, clock *braintest.Clock, addr string) *proactiveClock {
	return &proactiveClock{t: t, clock: clock, addr: addr}
}

// wakes is anima_cognition_wakes_total for reason.
func (c *proactiveClock) wakes(reason string) float64 {
	return max(0, metricSample(c.t, c.addr, `anima_cognition_wakes_total{reason="`+reason+`"}`))
}

// settle waits until the loop has run a whole tick on the clock's current time.
func (c *proactiveClock) settle() {
	c.t.Helper()
	waitTicks(c.t, c.addr, ticks(c.t, c.addr))
}

// advance moves the clock by d in steps of step, settling after each.
func (c *proactiveClock) advance(d, step time.Duration) {
	c.t.Helper()
	for end := c.clock.Now().Add(d); c.clock.Now().Before(end); {
		advance(c.t, c.clock, c.addr, min(step, end.Sub(c.clock.Now())))
	}
}

// expect moves the clock by d in steps of step, settling after each, and checks that
// anima has then woken to write first wakes times and sent sent messages in all (what
// says which).
func (c *proactiveClock) expect(h *harness, d, step time.Duration, wakes float64, sent int, what string) {
	c.t.Helper()
	c.advance(d, step)
	if n := c.wakes(brain.ReasonProactive); n != wakes {
		c.t.Errorf("%v proactive wakes after %v more, want %v", n, d, wakes)
	}
	if n := len(h.tg.Sent()); n != sent {
		c.t.Errorf("%d messages after %v more, want %d: %s", n, d, sent, what)
	}
}

// untilWakes moves the clock in steps of step, settling after each, until reason has
// woken anima n times in all, and returns how far the clock has moved since from; it fails
// the test if the clock moves limit without that.
func (c *proactiveClock) untilWakes(reason string, n float64, from time.Time, limit, step time.Duration) time.Duration {
	c.t.Helper()
	end := c.clock.Now().Add(limit)
	for c.wakes(reason) < n {
		if !c.clock.Now().Before(end) {
			c.t.Fatalf("no %s wake (%v in all) within %v on the manual clock", reason, n, limit)
		}
		advance(c.t, c.clock, c.addr, step)
	}
	return c.clock.Now().Sub(from)
}

// TestProactiveMessages: with short durations, anima writes first after the silence,
// respects the cooldown and the daily cap, and its wakes carry a reason. On the manual
// clock: a wake is timed by the clock's time at the step whose tick made it.
func TestProactiveMessages(t *testing.T) {
	t.Parallel()
	h, clock := proactiveHarness(t, testNoon())
	h.ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		// A wake without a user message (anima writing first) ends with a system message.
		if last := req.Messages[len(req.Messages)-1]; last.Role == openai.ChatMessageRoleSystem {
			return openaitest.Answer(fmt.Sprintf("Thinking of you, how did the %d things go?", len(req.Messages)), "active", 0.9)
		}
		return openaitest.Echo(req)
	})
	proactiveFast(h)
	addrs := h.run()
	c := newProactiveClock(t, clock, addrs.Metrics)
	const step = time.Second

	h.say("hi there")
	c.settle() // the reply's delivery is taken in at the reply's time
	replyAt := clock.Now()
	gap := c.untilWakes(brain.ReasonProactive, 1, replyAt, 10*time.Second, step)
	first := clock.Now()
	h.waitSent(2, "no proactive message")
	wantWithin(t, "the first proactive message after the reply (between min_silence 3 s and about twice that)", gap, 3*time.Second, 10*time.Second)
	gap2 := c.untilWakes(brain.ReasonProactive, 2, first, 30*time.Second, step)
	h.waitSent(3, "no second proactive message")
	t.Logf("second proactive message %v after the first (cooldown 4s, habituation 2×3s)", gap2)
	if gap2 < 4*time.Second {
		t.Errorf("second proactive message %v after the first, inside the cooldown", gap2)
	}
	// max_per_day 3, whose last wake is kept for a check-in or a follow-up: plain
	// missing-you pressure gets two, then nothing more today.
	c.expect(h, 14*time.Second, 2*time.Second, 2, 3, "the reply and the 2 proactive ones max_per_day=3 leaves plain pressure")
}

// TestNoProactiveInQuietHours: with quiet hours covering the whole day around now, anima
// never writes first.
func TestNoProactiveInQuietHours(t *testing.T) {
	t.Parallel()
	now := testNoon()
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
	h.say("good night")
	c.advance(6*time.Second, 500*time.Millisecond)
	stop()
	if n := len(h.tg.Sent()); n != 1 {
		t.Errorf("%d messages, want only the reply (quiet hours %s-%s UTC)", n, from, to)
	}
	if n := len(h.ai.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1: silence inside quiet hours must cost nothing", n)
	}
}

// TestLateMessageIsAnsweredNotMissed: a message anima takes in hours after it was written
// (anima was down, the update waited at Telegram) is answered, and the silence before it
// does not also make anima write first right after its answer: the conversation is fresh.
// The fake Bot API dates the message 10 hours before anima's clock.
func TestLateMessageIsAnsweredNotMissed(t *testing.T) {
	t.Parallel()
	h, clock := proactiveHarness(t, testNoon())
	h.tg.SetClock(func() time.Time { return clock.Now().Add(-10 * time.Hour) })
	proactiveFast(h)
	addrs := h.run()
	c := newProactiveClock(t, clock, addrs.Metrics)
	h.say("sorry, fell asleep: how was your evening?")
	// 2 s is inside min_silence after the answer.
	c.expect(h, 2*time.Second, 500*time.Millisecond, 0, 1, "only the answer to a late message")
}

// TestReminderSurvivesRestart: "remind me" → core_schedule (6 s) → stop → restart on the
// same store → the reminder arrives once, about 6 s after it was set. On the manual clock,
// which stands still while anima is stopped: the reminder is timed by the clock's time
// when it woke anima.
func TestReminderSurvivesRestart(t *testing.T) {
	t.Parallel()
	h, clock := proactiveHarness(t, testNoon())
	h.ai.Enqueue(
		openaitest.Tool("core_schedule", `{"note":"stretch your legs","delay_seconds":6,"at":null,"cron":null,"kind":"reminder","reason":"the user asked to be reminded"}`),
		openaitest.Answer("Sure — I'll remind you in 6 seconds.", "active", 0.95),
	)
	h.ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Answer("Time to stretch your legs!", "active", 0.95)
	})

	addrs, stop := h.start()
	h.say("remind me in 6 seconds to stretch my legs")
	newProactiveClock(t, clock, addrs.Metrics).settle()
	setAt := clock.Now()
	stop()

	addrs, stop = h.start()
	defer stop()
	c := newProactiveClock(t, clock, addrs.Metrics)
	// The scheduler looks for due reminders once a second of real time (bot.Run's period,
	// not the clock's): the clock is held a second before the reminder is due for longer
	// than that period (a reminder that came early would come then), and at the due time
	// until the reminder comes.
	c.advance(setAt.Add(5*time.Second).Sub(clock.Now()), time.Second)
	// A real-time wait the production code needs: the scheduler's poll runs on a fixed 1 s
	// real-time period, so only wall-clock time lets it look at this clock again.
	time.Sleep(1500 * time.Millisecond)
	c.settle()
	if n := c.wakes(brain.ReasonSchedule); n != 0 {
		t.Errorf("reminder came %v after it was set, want about 6s", clock.Now().Sub(setAt))
	}
	clock.Advance(time.Second)
	waitUntil(t, waitCtx(t), "the reminder: a schedule_due wake with the clock at its due time", func() bool {
		return c.wakes(brain.ReasonSchedule) >= 1
	})
	delay := clock.Now().Sub(setAt)
	sent := h.waitSent(2, "the reminder never came")
	wantWithin(t, "the reminder after it was set (asked for 6 s)", delay, 5*time.Second, 15*time.Second)
	if sent[1].Visible != "Time to stretch your legs!" {
		t.Errorf("reminder = %q", sent[1].Visible)
	}
	// The wake prompt told the model what the reminder was about.
	if last := string(lastRequest(h.ai).Raw); !strings.Contains(last, "stretch your legs") {
		t.Errorf("the reminder's prompt lacks its note:\n%s", last)
	}
	c.advance(2*time.Second, time.Second) // a second firing would come now
	if n := metricSample(t, c.addr, "anima_schedules_pending"); n != 0 {
		t.Errorf("%v reminders still pending after it fired: it may fire again", n)
	}
	stop()
	if n := len(h.tg.Sent()); n != 2 {
		t.Errorf("%d messages, want the answer and exactly one reminder", n)
	}
}
