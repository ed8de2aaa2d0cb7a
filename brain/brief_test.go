package brain_test

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

// rhythmAt is the learned rhythm of someone who writes at hours (local) every day for
// three weeks before 2026-03-01.
func rhythmAt(loc *time.Location, hours ...int) brain.Rhythm {
	var r brain.Rhythm
	for d := range 21 {
		for _, h := range hours {
			r.Observe(time.Date(2026, 2, 8+d, h, 10, 0, 0, loc), loc)
		}
	}
	return r
}

func TestClockWords(t *testing.T) {
	t.Parallel()
	berlin := braintest.Zone(t, "Europe/Berlin")
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 3, 3, 20, 10, 0, 0, time.UTC), "Tuesday evening, 21:10"},
		{time.Date(2026, 3, 3, 6, 5, 0, 0, time.UTC), "Tuesday morning, 07:05"},
		{time.Date(2026, 3, 3, 23, 30, 0, 0, time.UTC), "Wednesday night, 00:30"},
	} {
		if got := brain.ClockWords(tc.at, berlin); got != tc.want {
			t.Errorf("ClockWords(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func TestRhythmWords(t *testing.T) {
	t.Parallel()
	few := brain.Rhythm{}
	few.Observe(time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC), time.UTC)
	for _, tc := range []struct {
		name string
		r    brain.Rhythm
		want string
	}{
		{"not ready", few, ""},
		{"evenings", rhythmAt(time.UTC, 19, 20, 21), "in the evening"},
		{"mornings and evenings", rhythmAt(time.UTC, 7, 8, 9, 19, 20, 21), "in the morning and in the evening"},
		{"night owl", rhythmAt(time.UTC, 0, 1, 2, 3), "at night"},
	} {
		if got := brain.RhythmWords(&tc.r); got != tc.want {
			t.Errorf("%s: RhythmWords = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := brain.RhythmWords(nil); got != "" {
		t.Errorf("RhythmWords(nil) = %q", got)
	}
}

// TestSilenceWords: the silence is said in the person's waking time — the quiet hours and,
// once known, their sleep are "the night in between" — and never as a minute figure.
func TestSilenceWords(t *testing.T) {
	t.Parallel()
	quiet, err := brain.ParseQuietHours("22:30-08:30")
	if err != nil {
		t.Fatal(err)
	}
	sleeper := rhythmAt(time.UTC, 10, 11, 12, 13, 14)   // quiet from late afternoon on: inferred sleep
	now := time.Date(2026, 3, 3, 9, 30, 0, 0, time.UTC) // a Tuesday morning
	for _, tc := range []struct {
		name  string
		last  time.Time
		quiet brain.QuietHours
		r     brain.Rhythm
		want  string
	}{
		{"never", time.Time{}, quiet, brain.Rhythm{}, ""},
		{"minutes", now.Add(-25 * time.Minute), quiet, brain.Rhythm{}, "25 minutes ago"},
		{"this morning", now.Add(-3 * time.Hour), brain.QuietHours{}, brain.Rhythm{}, "earlier today: a few waking hours"},
		{"slept through it", time.Date(2026, 3, 2, 22, 50, 0, 0, time.UTC), quiet, brain.Rhythm{},
			"last night: about an hour, with the night in between"},
		{"yesterday evening", time.Date(2026, 3, 2, 21, 10, 0, 0, time.UTC), quiet, brain.Rhythm{},
			"yesterday evening: a few waking hours, with the night in between"},
		{"yesterday afternoon", time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC), quiet, brain.Rhythm{},
			"yesterday afternoon: about half a waking day, with the night in between"},
		{"no quiet hours", time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC), brain.QuietHours{}, brain.Rhythm{},
			"yesterday afternoon: about a day"},
		{"their sleep counts too", time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC), brain.QuietHours{}, sleeper,
			"yesterday afternoon: about half a waking day, with part of a night in between"},
		{"days", time.Date(2026, 2, 27, 20, 0, 0, 0, time.UTC), quiet, brain.Rhythm{}, "on Friday: about 4 days"},
		{"weeks", time.Date(2026, 2, 10, 20, 0, 0, 0, time.UTC), quiet, brain.Rhythm{}, "21 days ago"},
	} {
		if got := brain.SilenceWords(tc.last, now, time.UTC, tc.quiet, &tc.r); got != tc.want {
			t.Errorf("%s: SilenceWords = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTimesWords(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1: "once", 2: "twice", 3: "3 times"} {
		if got := brain.TimesWords(n); got != want {
			t.Errorf("TimesWords(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWhenWords(t *testing.T) {
	t.Parallel()
	berlin := braintest.Zone(t, "Europe/Berlin")
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, berlin) // a Monday morning
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-time.Minute), "now"},
		{now.Add(40 * time.Minute), "within the hour"},
		{now.Add(90 * time.Minute), "later this morning"},
		{time.Date(2026, 3, 2, 19, 0, 0, 0, berlin), "this evening"},
		{time.Date(2026, 3, 2, 23, 0, 0, 0, berlin), "later tonight"},
		{time.Date(2026, 3, 3, 1, 30, 0, 0, berlin), "late tonight"},
		{time.Date(2026, 3, 3, 8, 30, 0, 0, berlin), "tomorrow morning"},
		{time.Date(2026, 3, 3, 18, 0, 0, 0, berlin), "tomorrow evening"},
		{time.Date(2026, 3, 6, 18, 0, 0, 0, berlin), "on Friday evening"},
		{time.Date(2026, 3, 7, 2, 0, 0, 0, berlin), "on Friday night"},
		{time.Date(2026, 3, 12, 9, 0, 0, 0, berlin), "on Thu 12 Mar"},
		// The words follow the given zone, not the instant's: 08:30 UTC is 09:30 in Berlin.
		{time.Date(2026, 3, 3, 8, 30, 0, 0, time.UTC), "tomorrow morning"},
	} {
		if got := brain.WhenWords(tc.at, now, berlin); got != tc.want {
			t.Errorf("WhenWords(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func TestAgoWords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 5, 20, 0, 0, 0, time.UTC) // a Thursday evening
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-2 * time.Minute), "just now"},
		{now.Add(-25 * time.Minute), "25 minutes ago"},
		{now.Add(-2 * time.Hour), "earlier today"},
		{time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC), "this morning"},
		{time.Date(2026, 3, 5, 1, 0, 0, 0, time.UTC), "last night"},
		{time.Date(2026, 3, 4, 23, 0, 0, 0, time.UTC), "last night"},
		{time.Date(2026, 3, 4, 21, 14, 0, 0, time.UTC), "yesterday evening"},
		{time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), "on Monday"},
		{time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC), "13 days ago"},
		{time.Date(2025, 12, 1, 12, 0, 0, 0, time.UTC), "on 1 Dec"},
	} {
		if got := brain.AgoWords(tc.at, now, time.UTC); got != tc.want {
			t.Errorf("AgoWords(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}
