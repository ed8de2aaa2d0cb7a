package loop_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/autonomic"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
)

// thoughtNeuron emits one thought for a chat, once.
type thoughtNeuron struct{ fired bool }

func (n *thoughtNeuron) Name() string { return "test_thought" }

func (n *thoughtNeuron) Check(now time.Time, _ *brain.State) (brain.Signal, bool) {
	if n.fired {
		return brain.Signal{}, false
	}
	n.fired = true
	return brain.Signal{Type: brain.SignalThought, Source: "test_thought", Chat: 9, Text: "ask how the exam went", At: now}, true
}

func TestNeuronThoughtWakesCognition(t *testing.T) {
	t.Parallel()
	st := brain.NewState(time.UTC)
	st.Upsert(quietRel(9, time.Hour))
	agg := aggregation.New(noProactive(), aggregation.Options{})
	auto := autonomic.New(autonomic.Default(), &thoughtNeuron{})
	step := loop.NewStepper(loop.StepperDeps{State: st, Autonomic: auto, Aggregator: agg})
	wakes := step.Step(t0, nil)
	if len(wakes) != 1 || wakes[0].Chat != 9 || wakes[0].Reason.Code != brain.ReasonThought {
		t.Fatalf("wakes = %+v, want one thought wake for chat 9", wakes)
	}
	if again := step.Step(t0.Add(time.Second), nil); len(again) != 0 {
		t.Errorf("the handled thought woke cognition again: %+v", again)
	}
}

// TestNoInitiativeWhileAnswering: while a chat's run is in flight, the proactive rule's
// wake for it is left out, even when the silence says it is due (here a message taken in
// long after it was written, so the silence runs from its date until the answer goes
// out). Nothing is recorded for the left-out wake (no cooldown, no day's count), and only
// the answer is thought about and sent.
func TestNoInitiativeWhileAnswering(t *testing.T) {
	t.Parallel()
	h := newHarness(t, proactiveAnyTime())
	h.agg.decided = make(chan brain.Wake, 64)
	h.st.Upsert(quietRel(7, 7*time.Hour))
	gate := h.gate(7)
	h.start()
	late := h.msg(1, 7, "sorry, I fell asleep")
	// Written a day ago, taken in now: at this hour of the day, so the rhythm (which
	// learns from it) does not hold the proactive wake for the hours the user was seen in.
	late.At = t0.Add(-24 * time.Hour)
	h.submit(late)
	if w := recv(t, h.think.entered, "the answer's run"); w.Reason.Code != brain.ReasonUserMessage {
		t.Fatalf("first run's reason %q, want the user's message", w.Reason.Code)
	}
	h.submit(nudge()) // a step while the answer is in flight
	for {
		if w := recv(t, h.agg.decided, "the proactive rule to fire"); w.Chat == 7 && w.Reason.Code == brain.ReasonProactive {
			break
		}
	}
	close(gate)
	if m := recv(t, h.sender.attempts, "the answer"); m.Text != "re: sorry, I fell asleep" {
		t.Errorf("sent %q, want the answer", m.Text)
	}
	h.submit(nudge())
	h.stop()
	if n := len(h.think.Wakes()); n != 1 {
		t.Errorf("%d runs, want only the answer's", n)
	}
	if n := len(h.sender.Sent()); n != 1 {
		t.Errorf("%d messages, want only the answer", n)
	}
	if rel := h.st.Rel(7); !rel.LastProactive.IsZero() || rel.ProactiveToday != 0 {
		t.Errorf("relationship %+v: a left-out wake must not count against the cooldown or the day", *rel)
	}
}

// sim drives a Stepper (the Loop's per-tick part: no cognition, delivery or
// persistence) over the real autonomic and aggregation layers under a simulated clock.
// What a cognition run would have done after a wake — the send bookkeeping of the loop's
// finish — the simulation does itself.
type sim struct {
	t    testing.TB
	step *loop.Stepper
	st   *brain.State
	now  time.Time
}

func newSim(t testing.TB, agg brain.ProactivePolicy, loc *time.Location, start time.Time) *sim {
	t.Helper()
	acfg := autonomic.Default()
	acfg.MinSilence = agg.MinSilence
	if err := acfg.Validate(); err != nil {
		t.Fatal(err)
	}
	st := brain.NewState(loc)
	step := loop.NewStepper(loop.StepperDeps{
		State: st, Autonomic: autonomic.New(acfg), Aggregator: aggregation.New(agg, aggregation.Options{}),
	})
	return &sim{t: t, step: step, st: st, now: start}
}

// exchange: the user writes in chat, cognition is woken once and replies with status.
func (s *sim) exchange(chat int64, status brain.ConversationStatus) {
	s.t.Helper()
	ws := s.step.Step(s.now, []brain.Signal{{ID: 1, Type: brain.SignalUserMessage, Source: "sim", Chat: chat,
		User: chat, Text: "hello", At: s.now}})
	if len(ws) != 1 || ws[0].Reason.Code != brain.ReasonUserMessage {
		s.t.Fatalf("user message woke %+v, want one user_message wake", ws)
	}
	s.st.LLMWork++
	rel := s.st.Rel(chat)
	rel.MarkSent(s.now, brain.KindReply)
	rel.Status = status
}

// TestSimProactiveDisabledNeverWakes: with proactive contact off, a day of silence after
// one exchange costs no LLM call at all, whatever the neurons notice.
func TestSimProactiveDisabledNeverWakes(t *testing.T) {
	t.Parallel()
	cfg := brain.DefaultProactivePolicy()
	cfg.Enabled = false
	loc := braintest.Zone(t, "Europe/Berlin")
	s := newSim(t, cfg, loc, time.Date(2026, 3, 10, 9, 0, 0, 0, loc))
	s.exchange(1, brain.StatusAwaitingAnswer) // would invite a follow-up if enabled
	end := s.now.Add(24 * time.Hour)
	wakes, steps := 0, 0
	for s.now.Before(end) {
		s.now = s.now.Add(time.Second)
		wakes += len(s.step.Step(s.now, nil))
		steps++
	}
	t.Logf("%d steps (one per simulated second), %d wakes", steps, wakes)
	if wakes != 0 {
		t.Errorf("%d wakes (LLM calls) with proactive contact disabled, want 0", wakes)
	}
	rel := s.st.Rel(1)
	if rel.SocialPressure < 0.9 {
		t.Errorf("social pressure %v after 24 h: the autonomic layer did not run", rel.SocialPressure)
	}
	if rel.ProactiveToday != 0 || !rel.LastProactive.IsZero() {
		t.Errorf("proactive bookkeeping without a wake: %+v", *rel)
	}
}

// TestSimSilentWeek replays a week of silence after one exchange under the documented
// defaults in Europe/Berlin (the week contains the spring DST change), one step per
// simulated minute.
func TestSimSilentWeek(t *testing.T) {
	t.Parallel()
	loc := braintest.Zone(t, "Europe/Berlin")
	start := time.Date(2026, 3, 23, 9, 0, 0, 0, loc) // Monday; DST starts Sunday 29th
	tests := []struct {
		name   string
		status brain.ConversationStatus
		send   bool          // every proactive wake sends a message (else the model stays silent)
		first  time.Duration // when the first proactive wake comes
		// thin: days 5–7 have fewer messages than days 1–3 (a closed chat's second message
		// needs 48 waking hours and comes on day 7: one in each half).
		thin bool
	}{
		// Silence counts in waking time, and the user was seen only around 09:00: every
		// first wake waits for the next morning's 08:30 (hour 8 is theirs, by its
		// neighbour), after min_silence (15:00), the follow-up's 3 h (12:00) or 4 ×
		// min_silence (24 waking hours: Tuesday 19:00, so Wednesday morning).
		{"active, every wake sends", brain.StatusActive, true, 23*time.Hour + 30*time.Minute, true},
		{"awaiting answer, every wake sends", brain.StatusAwaitingAnswer, true, 23*time.Hour + 30*time.Minute, true},
		{"closed, every wake sends", brain.StatusClosed, true, 47*time.Hour + 30*time.Minute, false},
		{"active, the model never speaks", brain.StatusActive, false, 23*time.Hour + 30*time.Minute, true}, // silent runs back off too
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := brain.DefaultProactivePolicy()
			s := newSim(t, cfg, loc, start)
			const chat = 42
			s.exchange(chat, tc.status)

			var at []time.Time
			perDay := make([]int, 7)
			end := time.Date(2026, 3, 30, 0, 0, 0, 0, loc) // seven local days: Mon 23 – Sun 29
			for s.now = s.now.Add(time.Minute); s.now.Before(end); s.now = s.now.Add(time.Minute) {
				for _, w := range s.step.Step(s.now, nil) {
					local := s.now.In(loc)
					switch w.Reason.Code {
					case brain.ReasonProactive, brain.ReasonFollowup:
					default:
						t.Fatalf("%s: unexpected wake %q", local, w.Reason.Code)
					}
					if w.Chat != chat || w.Profile != brain.ProfileProactive {
						t.Fatalf("wake %+v", w)
					}
					if q := aggregationQuiet(cfg, local); q {
						t.Errorf("wake at %s, inside quiet hours", local.Format("Mon 15:04 MST"))
					}
					at = append(at, s.now)
					perDay[dayIndex(start, local)]++
					s.st.LLMWork++
					if tc.send {
						kind := brain.KindProactive
						if w.Reason.Code == brain.ReasonFollowup {
							kind = brain.KindFollowup
						}
						s.st.Rel(chat).MarkSent(s.now, kind)
					} else {
						// What the core loop does with a run that said nothing: it backs
						// off like an unanswered message.
						s.st.Rel(chat).UnansweredProactive++
					}
				}
			}

			var b strings.Builder
			for i, n := range perDay {
				fmt.Fprintf(&b, " %s=%d", start.AddDate(0, 0, i).Format("Mon02"), n)
			}
			t.Logf("per local day:%s", b.String())
			for _, x := range at {
				t.Logf("  wake %s", x.In(loc).Format("Mon 02 Jan 15:04 MST"))
			}

			for i, n := range perDay {
				if n > cfg.MaxPerDay {
					t.Errorf("day %d: %d proactive wakes, more than max_per_day %d", i, n, cfg.MaxPerDay)
				}
			}
			for i := 1; i < len(at); i++ {
				if gap := at[i].Sub(at[i-1]); gap < cfg.Cooldown {
					t.Errorf("wakes %s and %s closer than the cooldown", at[i-1], at[i])
				}
			}
			if len(at) == 0 {
				t.Fatal("no proactive wake in a silent week")
			}
			if got := at[0].Sub(start); got != tc.first {
				t.Errorf("first proactive wake after %v, want %v", got, tc.first)
			}
			if !tc.send {
				return
			}
			// Habituation: each unanswered message doubles the silence needed, so once the
			// follow-up is out the gaps between messages never shrink, and no day has more
			// messages than the busiest day before it (from the first day with one).
			first := 1
			if tc.status == brain.StatusAwaitingAnswer {
				first = 2 // the follow-up comes after followup_after, not after min_silence
			}
			for i := first + 1; i < len(at); i++ {
				if at[i].Sub(at[i-1]) < at[i-1].Sub(at[i-2]) {
					t.Errorf("gap before wake %d (%v) shorter than the one before (%v)", i, at[i].Sub(at[i-1]), at[i-1].Sub(at[i-2]))
				}
			}
			busiest := 0
			for i := range perDay {
				if busiest > 0 && perDay[i] > busiest {
					t.Errorf("day %d has %d messages, more than any earlier day (%d)", i, perDay[i], busiest)
				}
				busiest = max(busiest, perDay[i])
			}
			firstHalf, secondHalf := perDay[0]+perDay[1]+perDay[2], perDay[4]+perDay[5]+perDay[6]
			if secondHalf > firstHalf || tc.thin && secondHalf == firstHalf {
				t.Errorf("days 5–7 have %d messages, days 1–3 %d: habituation should thin them out", secondHalf, firstHalf)
			}
		})
	}
}

// dayIndex is the number of local calendar days from start to local.
func dayIndex(start, local time.Time) int {
	s := time.Date(start.Year(), start.Month(), start.Day(), 12, 0, 0, 0, time.UTC)
	l := time.Date(local.Year(), local.Month(), local.Day(), 12, 0, 0, 0, time.UTC)
	return int(l.Sub(s).Hours() / 24)
}

// aggregationQuiet is the quiet-hours rule, restated for the assertions.
func aggregationQuiet(cfg brain.ProactivePolicy, local time.Time) bool {
	h, m, _ := local.Clock()
	t := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	start, end, ok := cfg.QuietHours.Offsets()
	if !ok {
		return false
	}
	if start > end {
		return t >= start || t < end
	}
	return start <= t && t < end
}

// idleSim is n relationships whose last exchange was an hour ago: nothing should wake.
func idleSim(tb testing.TB, n int) *sim {
	loc := braintest.Zone(tb, "Europe/Berlin")
	start := time.Date(2026, 3, 10, 11, 0, 0, 0, loc)
	s := newSim(tb, brain.DefaultProactivePolicy(), loc, start)
	for i := range n {
		chat := int64(i + 1)
		s.st.Upsert(brain.Relationship{Chat: chat, User: chat, LastUserMsg: start.Add(-time.Hour),
			LastAgentMsg: start.Add(-time.Hour), Status: brain.StatusActive})
	}
	// Warm up: the first steps size the neurons' per-chat state and take first readings.
	for range 3 {
		s.now = s.now.Add(time.Second)
		if ws := s.step.Step(s.now, nil); len(ws) != 0 {
			tb.Fatalf("idle relationships woke: %+v", ws[0])
		}
	}
	return s
}

func TestStepIdleAllocatesNothing(t *testing.T) {
	s := idleSim(t, 1000)
	wakes := 0
	allocs := testing.AllocsPerRun(200, func() {
		s.now = s.now.Add(100 * time.Millisecond)
		wakes += len(s.step.Step(s.now, nil))
	})
	if wakes != 0 {
		t.Fatalf("%d wakes on idle steps", wakes)
	}
	if allocs != 0 {
		t.Errorf("an idle Step over 1000 relationships allocates %v times, want 0", allocs)
	}
}

// BenchmarkStepIdle is one tick of the layers over 10,000 idle relationships.
func BenchmarkStepIdle(b *testing.B) {
	const n = 10_000
	s := idleSim(b, n)
	wakes := 0
	b.ReportAllocs()
	for b.Loop() {
		s.now = s.now.Add(100 * time.Millisecond)
		wakes += len(s.step.Step(s.now, nil))
	}
	if wakes != 0 {
		b.Fatalf("%d wakes on idle steps", wakes)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/rel")
}
