package aggregation

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// evening is a rhythm learned over two weeks from a person who writes at 19:10 and 20:20
// every day (UTC): active 18–21, asleep from 22:00 for 8 hours.
func evening() brain.Rhythm { return daily(19*time.Hour+10*time.Minute, 20*time.Hour+20*time.Minute) }

// daily is a rhythm learned over two weeks from 16 Feb 2026 from a person who writes at
// the times of day at, every day (UTC).
func daily(at ...time.Duration) brain.Rhythm {
	var r brain.Rhythm
	start := time.Date(2026, 2, 16, 0, 0, 0, 0, time.UTC)
	for d := range 14 {
		day := start.AddDate(0, 0, d)
		for _, t := range at {
			r.Observe(day.Add(t), time.UTC)
		}
	}
	return r
}

// idleFor runs d from start under cfg for an idle person with rhythm r (zone UTC) and
// returns the sim and its proactive wakes, failing the test without any.
func idleFor(t *testing.T, cfg brain.ProactivePolicy, start time.Time, d time.Duration, r brain.Rhythm) (*sim, []time.Time) {
	t.Helper()
	s := newSim(t, cfg, time.UTC, start)
	s.talk(1, brain.StatusIdle).Rhythm = r
	s.run(d, time.Minute)
	at := s.proactive()
	if len(at) == 0 {
		t.Fatalf("no proactive wake in the %s from %s", d, start.Format("Mon 15:04"))
	}
	return s, at
}

// eveningDay runs a day from Monday 00:00 under cfg for an idle person who writes in the
// evening (idleFor).
func eveningDay(t *testing.T, cfg brain.ProactivePolicy) (*sim, []time.Time) {
	t.Helper()
	return idleFor(t, cfg, monday, 24*time.Hour, evening())
}

// TestRhythmPrefersActiveHours: contact due at 16:00 waits for the person's evening (and
// not its first minute), and never goes out in their sleep.
func TestRhythmPrefersActiveHours(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.Jitter = time.Hour
	s, at := eveningDay(t, cfg)
	h := at[0].Hour()
	if h < 18 || h > 21 || at[0].Minute() == 0 && h == 18 {
		t.Errorf("first wake at %s; want inside the active hours 18–21, not on their first minute", at[0].Format("15:04"))
	}
	for _, w := range at {
		if s.st.Rel(1).Rhythm.Asleep(w, time.UTC) {
			t.Errorf("wake at %s, inside the inferred sleep", w.Format("Mon 15:04"))
		}
	}
}

// TestRhythmPrefersPeakHours: contact due at 16:00 waits past the edge of the person's
// active hours (18:00, active only as the neighbour of their 19:10 habit) for the hours
// they actually write in, 19–21; without jitter the first active hour's first minute
// was taken.
func TestRhythmPrefersPeakHours(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.Jitter = 0
	_, at := eveningDay(t, cfg)
	if h := at[0].Hour(); h < 19 || h > 20 {
		t.Errorf("first wake at %s; want in the hours the person writes in, 19–21", at[0].Format("15:04"))
	}
}

// TestRhythmDoesNotStarve: a person whose active hours all fall inside quiet hours still
// hears from anima, in the half hour before quiet hours begin (the edge nearest their own
// hours, issue 35; it was any waking hour), once a usual time of theirs has passed without
// them: within two days of contact coming due.
func TestRhythmDoesNotStarve(t *testing.T) {
	t.Parallel()
	cfg := brain.DefaultProactivePolicy() // quiet hours 22:30–08:30
	var r brain.Rhythm
	start := time.Date(2026, 2, 16, 0, 0, 0, 0, time.UTC)
	for d := range 14 { // writes at 23:10 and 00:40 only
		r.Observe(start.AddDate(0, 0, d).Add(23*time.Hour+10*time.Minute), time.UTC)
		r.Observe(start.AddDate(0, 0, d+1).Add(40*time.Minute), time.UTC)
	}
	s := newSim(t, cfg, time.UTC, monday)
	s.talk(1, brain.StatusIdle).Rhythm = r
	s.run(54*time.Hour, time.Minute)
	at := s.proactive()
	if len(at) == 0 || at[0].Sub(monday) > cfg.MinSilence+48*time.Hour {
		t.Fatalf("wakes %v; want one within two days of the 6 h silence", at)
	}
	if h := at[0].Hour(); h != 22 {
		t.Errorf("wake at %s; want in the hour before theirs, before quiet hours (22:00–22:30)", at[0].Format("Mon 15:04"))
	}
	if r.Asleep(at[0], time.UTC) || cfg.QuietHours.Contains(at[0], time.UTC) {
		t.Errorf("wake at %s: in sleep or quiet hours", at[0].Format("15:04"))
	}
}

// TestPressureWaitsPastADay: plain proactive contact that comes due when the person's
// next active hours are more than a day away (here 26 h, after their sleep) waits for
// them, since nothing makes it urgent; with a patience of a day it went out at the first
// waking hour, off their hours.
func TestPressureWaitsPastADay(t *testing.T) {
	t.Parallel()
	// A person whose hours differ by day (a shift worker): Monday 21:00, Wednesday 09:00,
	// Thursday 12:00, Friday 15:00, Saturday 18:00, for three weeks.
	var r brain.Rhythm
	hours := map[time.Weekday]int{time.Monday: 21, time.Wednesday: 9, time.Thursday: 12, time.Friday: 15, time.Saturday: 18}
	start := time.Date(2026, 2, 9, 0, 0, 0, 0, time.UTC) // a Monday
	for d := range 21 {
		day := start.AddDate(0, 0, d)
		if h, ok := hours[day.Weekday()]; ok {
			r.Observe(day.Add(time.Duration(h)*time.Hour+10*time.Minute), time.UTC)
			r.Observe(day.Add(time.Duration(h)*time.Hour+40*time.Minute), time.UTC)
		}
	}
	if !r.Ready() || r.Active(time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC), time.UTC) {
		t.Fatalf("profile not as built: ready %v, active on Tuesday noon", r.Ready())
	}
	cfg := noQuiet()
	cfg.Jitter = time.Hour
	// Silence from Monday 17:00: due at 23:00, in the sleep; the next active hours are on
	// Wednesday from 08:00.
	s := newSim(t, cfg, time.UTC, time.Date(2026, 3, 2, 17, 0, 0, 0, time.UTC))
	s.talk(1, brain.StatusIdle).Rhythm = r
	s.run(48*time.Hour, 5*time.Minute)
	at := s.proactive()
	if len(at) == 0 {
		t.Fatal("no proactive wake in two days")
	}
	if !r.Active(at[0], time.UTC) || r.Asleep(at[0], time.UTC) {
		t.Errorf("first wake at %s; want inside the active hours (Wednesday 08–10)", at[0].Format("Mon 15:04"))
	}
}

// TestFollowupNotInSleep: a follow-up that comes due in the person's inferred sleep waits
// for them to wake (and a little more).
func TestFollowupNotInSleep(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.Jitter = time.Hour
	start := time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC)
	s := newSim(t, cfg, time.UTC, start)
	s.talk(1, brain.StatusAwaitingAnswer).Rhythm = evening() // asleep 22:00–06:00
	s.run(24*time.Hour, time.Minute)
	at := s.proactive()
	if s.count(brain.ReasonFollowup) != 1 {
		t.Fatalf("%d follow-ups, want 1", s.count(brain.ReasonFollowup))
	}
	if h := at[0].Hour(); h < 6 || h >= 22 || at[0].Equal(start.Add(9*time.Hour)) {
		t.Errorf("follow-up at %s; want after the sleep 22–06 and not on its last minute", at[0].Format("Mon 15:04"))
	}
}

// TestJitterQuietHoursEnd: with jitter, contact held by quiet hours never goes out on the
// minute they end; every day's wake lands at its own minute; the same seed repeats the
// times and another seed does not.
func TestJitterQuietHoursEnd(t *testing.T) {
	t.Parallel()
	run := func(seed uint64) []time.Time {
		cfg := brain.DefaultProactivePolicy()
		cfg.Jitter, cfg.Seed = time.Hour, seed
		s := newSim(t, cfg, time.UTC, time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC))
		s.talk(1, brain.StatusIdle)
		s.run(6*24*time.Hour, time.Minute) // the model never says anything: one wake a morning or so
		return s.proactive()
	}
	a := run(7)
	if len(a) < 3 {
		t.Fatalf("%d wakes in 6 days", len(a))
	}
	seen := map[int]bool{}
	for _, w := range a {
		m := w.Hour()*60 + w.Minute()
		if m == 8*60+30 {
			t.Errorf("wake at %s: the minute quiet hours end", w.Format("Mon 15:04"))
		}
		if seen[m] {
			t.Errorf("two wakes at %s of the day", w.Format("15:04"))
		}
		seen[m] = true
	}
	b, c := run(7), run(8)
	for i := range a {
		if !a[i].Equal(b[i]) {
			t.Fatalf("same seed, different times: %v vs %v", a, b)
		}
	}
	same := len(a) == len(c)
	for i := 0; same && i < len(a); i++ {
		same = a[i].Equal(c[i])
	}
	if same {
		t.Errorf("seeds 7 and 8 give the same times %v", a)
	}
}

// TestLastWakeKeptForCheckin: plain pressure leaves the day's last wake (max_per_day 2)
// to a check-in, which gets it.
func TestLastWakeKeptForCheckin(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.MinSilence, cfg.Cooldown = time.Hour, time.Hour
	s := newSim(t, cfg, time.UTC, time.Date(2026, 3, 2, 0, 5, 0, 0, time.UTC))
	s.talk(1, brain.StatusIdle)
	s.run(20*time.Hour, time.Minute)
	if n := s.count(brain.ReasonProactive); n != 1 {
		t.Fatalf("%d plain wakes in a day with max_per_day 2, want 1 (the last kept)", n)
	}
	s.st.Thoughts = []brain.Thought{{Chat: 1, Text: "driving test", Gated: true, Reason: brain.ReasonConcernCheckin, At: s.now}}
	ws := s.tick()
	if len(ws) != 1 || !ws[0].Gated {
		t.Fatalf("wakes %+v; want the check-in to take the day's last wake", ws)
	}
}

// BenchmarkDecideOffHours10k is one Decide over 10,000 relationships with a learned
// rhythm whose contact is due but waits for their active hours: the rhythm gate's worst
// case (it looks a day ahead for each).
func BenchmarkDecideOffHours10k(b *testing.B) {
	const n = 10_000
	cfg := brain.DefaultProactivePolicy()
	cfg.Jitter = time.Hour
	a := New(cfg, Options{})
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	st := idleState(n, now.Add(-10*time.Hour))
	r := evening()
	for _, rel := range st.Rels {
		rel.Rhythm = r
	}
	benchDecide(b, a, st, now, 0)
}
