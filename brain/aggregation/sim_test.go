package aggregation

import (
	"fmt"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

// noQuiet is the default policy without quiet hours.
func noQuiet() brain.ProactivePolicy {
	c := brain.DefaultProactivePolicy()
	c.QuietHours = brain.QuietHours{}
	return c
}

// sim drives an Aggregator under a simulated clock the way the core loop does: it records
// dispatched proactive wakes in the relationship and, when send is set, pretends the model
// sent a message for each (leaving the conversation in status after).
type sim struct {
	t      testing.TB
	agg    *Aggregator
	st     *brain.State
	now    time.Time
	send   bool
	status brain.ConversationStatus
	buf    []brain.Wake
	wakes  []brain.Wake // every wake, At set
}

func newSim(t testing.TB, cfg brain.ProactivePolicy, loc *time.Location, start time.Time) *sim {
	return &sim{t: t, agg: New(cfg, Options{}), st: brain.NewState(loc), now: start, status: brain.StatusIdle}
}

// talk records an exchange in chat at the current time: the user writes, anima answers
// with status.
func (s *sim) talk(chat int64, status brain.ConversationStatus) *brain.Relationship {
	rel := s.st.Rel(chat)
	if rel == nil {
		rel = s.st.Upsert(brain.Relationship{Chat: chat, User: chat, Name: fmt.Sprint("user", chat)})
	}
	rel.MarkUserMessage(s.now)
	s.agg.ClearChat(chat)
	rel.MarkSent(s.now, brain.KindReply)
	rel.Status = status
	return rel
}

// tick runs one Decide at the current time and applies the core loop's bookkeeping.
func (s *sim) tick(sigs ...brain.Signal) []brain.Wake {
	s.buf = s.agg.Decide(s.now, s.st, sigs, s.buf[:0])
	for _, w := range s.buf {
		if w.Reason.Code == "" || w.Reason.Text == "" {
			s.t.Fatalf("wake without a reason: %+v", w)
		}
		if w.At.IsZero() {
			w.At = s.now
		}
		s.wakes = append(s.wakes, w)
		rel := s.st.Rel(w.Chat)
		switch w.Reason.Code {
		case brain.ReasonProactive, brain.ReasonFollowup:
			rel.MarkProactiveWake(s.now, s.st.Location(rel), w.Reason.Code == brain.ReasonFollowup)
			if s.send {
				kind := brain.KindProactive
				if w.Reason.Code == brain.ReasonFollowup {
					kind = brain.KindFollowup
				}
				rel.MarkSent(s.now, kind)
				rel.Status = s.status
			}
		}
	}
	return s.buf
}

// run ticks every step for d.
func (s *sim) run(d, step time.Duration) {
	for end := s.now.Add(d); s.now.Before(end); {
		s.now = s.now.Add(step)
		s.tick()
	}
}

// proactive returns the times of the proactive and follow-up wakes so far.
func (s *sim) proactive() []time.Time {
	var at []time.Time
	for _, w := range s.wakes {
		if w.Reason.Code == brain.ReasonProactive || w.Reason.Code == brain.ReasonFollowup {
			at = append(at, w.At)
		}
	}
	return at
}

// wantFirstProactive checks that the first proactive wake came exactly after monday, the
// start of the tests' exchanges; why says what decides that moment.
func (s *sim) wantFirstProactive(after time.Duration, why string) {
	s.t.Helper()
	if at := s.proactive(); len(at) == 0 || at[0].Sub(monday) != after {
		s.t.Errorf("proactive wakes %v; want the first %v after the exchange: %s", at, after, why)
	}
}

func (s *sim) count(code string) int {
	n := 0
	for _, w := range s.wakes {
		if w.Reason.Code == code {
			n++
		}
	}
	return n
}

var monday = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) // a Monday, 10:00 UTC

func TestFirstProactiveWake(t *testing.T) {
	t.Parallel()
	berlin := braintest.Zone(t, "Europe/Berlin")
	for _, status := range []brain.ConversationStatus{brain.StatusActive, brain.StatusIdle, ""} {
		t.Run(string(status), func(t *testing.T) {
			start := time.Date(2026, 3, 2, 9, 0, 0, 0, berlin)
			s := newSim(t, brain.DefaultProactivePolicy(), berlin, start)
			s.talk(1, status)
			s.run(24*time.Hour, time.Minute)
			at := s.proactive()
			if len(at) == 0 {
				t.Fatal("no proactive wake in 24 h")
			}
			gap := at[0].Sub(start)
			if gap < 6*time.Hour || gap >= 12*time.Hour {
				t.Errorf("first proactive wake %s after the exchange, want within [min_silence, 2×min_silence)", gap)
			}
			t.Logf("first proactive wake %s after the exchange: %q", gap, s.wakes[0].Reason.Text)
		})
	}
}

func TestQuietHoursWrapMidnight(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"America/New_York", "Europe/Berlin"} {
		t.Run(zone, func(t *testing.T) {
			loc := braintest.Zone(t, zone)
			cfg := brain.DefaultProactivePolicy()
			cfg.MinSilence, cfg.Cooldown, cfg.MaxPerDay = time.Hour, time.Hour, 100
			var err error
			if cfg.QuietHours, err = brain.ParseQuietHours("22:30-08:30"); err != nil {
				t.Fatal(err)
			}
			if start, _, _ := cfg.QuietHours.Offsets(); start != 22*time.Hour+30*time.Minute {
				t.Fatal("ParseQuietHours")
			}
			start := time.Date(2026, 3, 6, 18, 0, 0, 0, loc) // a Friday; spans the US DST change on Mar 8
			s := newSim(t, cfg, loc, start.UTC())
			s.talk(1, brain.StatusIdle)
			s.run(4*24*time.Hour, time.Minute) // the model never says anything
			at := s.proactive()
			morning := 0
			for _, w := range at {
				l := w.In(loc)
				h, m, _ := l.Clock()
				min := h*60 + m
				if min >= 22*60+30 || min < 8*60+30 {
					t.Errorf("proactive wake inside quiet hours at %s", l.Format("Mon 15:04 MST"))
				}
				if min >= 8*60+30 && min < 9*60+30 {
					t.Errorf("proactive wake in the hour after quiet hours at %s; the user was never seen then", l.Format("Mon 15:04 MST"))
				}
				if min == 9*60+30 {
					morning++
				}
			}
			if morning != 4 {
				t.Errorf("%d wakes right at 09:30 local, want 4 (one each morning, an hour after quiet hours)", morning)
			}
			t.Logf("%d proactive wakes in 4 days, first at %s", len(at), at[0].In(loc).Format("Mon 15:04 MST"))
		})
	}
}

func TestCooldownAndMaxPerDay(t *testing.T) {
	t.Parallel()
	berlin := braintest.Zone(t, "Europe/Berlin")
	cfg := noQuiet()
	// max_per_day 3: plain pressure may take 2 a day, the last is kept for a check-in or
	// a follow-up (TestLastWakeKeptForCheckin).
	cfg.MinSilence, cfg.Cooldown, cfg.MaxPerDay = time.Hour, 3*time.Hour, 3
	start := time.Date(2026, 3, 2, 0, 30, 0, 0, berlin)
	s := newSim(t, cfg, berlin, start)
	s.talk(1, brain.StatusIdle)
	s.run(5*24*time.Hour-31*time.Minute, time.Minute) // to 23:59 on day 5; the model never speaks
	at := s.proactive()
	perDay := map[string]int{}
	for i, w := range at {
		perDay[w.In(berlin).Format("2006-01-02")]++
		if i > 0 && w.Sub(at[i-1]) < cfg.Cooldown {
			t.Errorf("wakes %s apart, cooldown %s", w.Sub(at[i-1]), cfg.Cooldown)
		}
	}
	for day, n := range perDay {
		if n > cfg.MaxPerDay-1 {
			t.Errorf("%s: %d plain proactive wakes, max_per_day %d less the one kept", day, n, cfg.MaxPerDay)
		}
	}
	if len(perDay) != 5 || len(at) != 10 {
		t.Errorf("%d wakes over %d days, want 2 a day for 5 days: %v", len(at), len(perDay), perDay)
	}
	// The first two of each day are 3 h apart: 01:30 and 04:30.
	if got := at[1].Sub(at[0]); got != 3*time.Hour {
		t.Errorf("second wake %s after the first, want the 3 h cooldown", got)
	}
}

func TestFollowupOnce(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.send, s.status = true, brain.StatusAwaitingAnswer // the follow-up asks again
	s.talk(1, brain.StatusAwaitingAnswer)
	s.run(10*time.Hour, time.Minute)
	if n := s.count(brain.ReasonFollowup); n != 1 {
		t.Fatalf("%d follow-ups, want exactly 1", n)
	}
	at := s.proactive()
	if got := at[0].Sub(monday); got != 3*time.Hour {
		t.Errorf("follow-up %s after the question, want followup_after 3h", got)
	}
	// After the follow-up (1 unanswered), the next proactive contact needs 2 × 6 h.
	if len(at) != 1 {
		t.Errorf("proactive wakes at %v; want only the follow-up within 10 h", at)
	}
	// The user answers at 20:00 and is asked again: a new follow-up is allowed, but not
	// overnight (the rhythm knows too little yet: the night is 22–7), so at 07:00.
	s.talk(1, brain.StatusAwaitingAnswer)
	s.run(12*time.Hour, time.Minute)
	if n := s.count(brain.ReasonFollowup); n != 2 {
		t.Fatalf("%d follow-ups after a new question, want 2", n)
	}
	if at := s.proactive(); at[len(at)-1].Hour() != 7 || at[len(at)-1].Minute() != 0 {
		t.Errorf("second follow-up at %s, want 07:00 when the night ends", at[len(at)-1].Format("15:04"))
	}
}

func TestHabituation(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.Cooldown, cfg.MaxPerDay = 0, 100
	s := newSim(t, cfg, time.UTC, monday)
	s.send = true
	s.talk(1, brain.StatusIdle)
	s.run(8*24*time.Hour, time.Minute)
	at := s.proactive()
	gaps := braintest.Gaps(monday, at)
	t.Logf("gaps between proactive messages while the user stays silent: %v", gaps)
	want := []time.Duration{6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour, 96 * time.Hour}
	if len(gaps) != len(want) {
		t.Fatalf("gaps %v, want %v", gaps, want)
	}
	for i := range want {
		if gaps[i] != want[i] {
			t.Fatalf("gaps %v, want %v", gaps, want)
		}
	}
	if w := s.wakes[len(s.wakes)-1]; w.Reason.Text != "4d since we last talked; pressure 1.00; 4 messages unanswered, so I waited at least 4d" {
		t.Errorf("reason text %q", w.Reason.Text)
	}
	// The user writes: habituation resets.
	s.talk(1, brain.StatusIdle)
	start := s.now
	s.run(7*time.Hour, time.Minute)
	if at := s.proactive(); at[len(at)-1].Sub(start) != 6*time.Hour {
		t.Errorf("after the user wrote, next wake %s later, want 6h", at[len(at)-1].Sub(start))
	}
}

func TestClosedWaitsFourTimes(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusClosed)
	s.run(2*24*time.Hour, time.Minute)
	s.wantFirstProactive(24*time.Hour, "a closed conversation waits 4 × min_silence")
}

func TestDisabled(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.Enabled = false
	s := newSim(t, cfg, time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.talk(2, brain.StatusAwaitingAnswer)
	s.run(24*time.Hour, time.Minute)
	if len(s.wakes) != 0 {
		t.Errorf("%d wakes with proactive disabled, want 0", len(s.wakes))
	}
}

func TestSilentWeekDefaults(t *testing.T) {
	t.Parallel()
	berlin := braintest.Zone(t, "Europe/Berlin")
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, berlin)
	s := newSim(t, brain.DefaultProactivePolicy(), berlin, start)
	s.send = true
	s.talk(1, brain.StatusIdle)
	s.run(7*24*time.Hour, time.Minute)
	counts := make([]int, 8) // per local calendar day, Monday first
	for _, w := range s.proactive() {
		y, m, d := w.In(berlin).Date()
		day := int(time.Date(y, m, d, 12, 0, 0, 0, berlin).Sub(start).Hours() / 24)
		counts[day]++
	}
	t.Logf("proactive wakes per day over a silent week (defaults): %v", counts[:7])
	for i, w := range s.proactive() {
		t.Logf("  wake %d at %s: %s", i+1, w.In(berlin).Format("Mon 15:04"), s.wakes[i].Reason.Text)
	}
	total := 0
	for day, n := range counts[:7] {
		total += n
		if n > brain.DefaultProactivePolicy().MaxPerDay {
			t.Errorf("day %d: %d wakes, max_per_day %d", day, n, brain.DefaultProactivePolicy().MaxPerDay)
		}
	}
	if counts[0] == 0 || counts[5]+counts[6] >= counts[0]+counts[1] {
		t.Errorf("per-day counts %v: want contact on day 1 and fewer later as habituation sets in", counts[:7])
	}
	if total > 5 {
		t.Errorf("%d proactive messages to a silent user in a week, want at most 5", total)
	}
}
