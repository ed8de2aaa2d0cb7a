package brain

import (
	"testing"
	"time"
)

func TestWakingBetween(t *testing.T) {
	t.Parallel()
	night, err := ParseQuietHours("22:30-08:30")
	if err != nil {
		t.Fatal(err)
	}
	day, _ := ParseQuietHours("09:00-17:00")
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// A rhythm Ready with inferred sleep 03:00–11:00 (it overlaps the quiet hours' end).
	var owl Rhythm
	owl.Messages, owl.Days = RhythmMinMessages, RhythmMinDays
	for h := 3; h < 11; h++ {
		owl.SleepMask |= 1 << h
	}
	notReady := owl
	notReady.Messages = 1
	utc := func(d, h, m int) time.Time { return time.Date(2026, 3, d, h, m, 0, 0, time.UTC) }
	tests := []struct {
		name  string
		quiet QuietHours
		r     *Rhythm
		loc   *time.Location
		a, b  time.Time
		want  time.Duration
	}{
		{"no quiet hours: the wall clock", QuietHours{}, nil, nil, utc(2, 21, 0), utc(3, 10, 0), 13 * time.Hour},
		{"over a night of quiet hours", night, nil, nil, utc(2, 21, 0), utc(3, 10, 0), 3 * time.Hour},
		{"begun inside quiet hours", night, nil, nil, utc(2, 23, 0), utc(3, 9, 0), 30 * time.Minute},
		{"all inside quiet hours", night, nil, nil, utc(2, 23, 0), utc(3, 8, 0), 0},
		{"a week: 14 waking hours a day", night, nil, nil, utc(2, 12, 0), utc(9, 12, 0), 7 * 14 * time.Hour},
		{"quiet hours not wrapping midnight", day, nil, nil, utc(2, 8, 0), utc(2, 18, 0), 2 * time.Hour},
		{"inferred sleep beside quiet hours", night, &owl, nil, utc(2, 21, 0), utc(3, 12, 0), 2*time.Hour + 30*time.Minute},
		{"sleep not used before Ready", night, &notReady, nil, utc(2, 21, 0), utc(3, 12, 0), 5 * time.Hour},
		{"end before start", night, nil, nil, utc(3, 10, 0), utc(2, 21, 0), 0},
		{"no exchange yet", night, nil, nil, time.Time{}, utc(2, 21, 0), 0},
		// Clocks go forward at 02:00 on 29 March, inside the quiet hours: the night is
		// 10 hours on the clock either way, the evening and morning 2 hours.
		{"a daylight saving night", night, nil, berlin, time.Date(2026, 3, 28, 21, 30, 0, 0, berlin),
			time.Date(2026, 3, 29, 9, 30, 0, 0, berlin), 2 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := NewWaking(tc.quiet, tc.r, tc.loc)
			if got := w.Between(tc.a, tc.b); got != tc.want {
				t.Fatalf("Between = %s, want %s", got, tc.want)
			}
			if tc.want <= 0 {
				return
			}
			// After inverts Between: the first moment the waking time reaches it.
			at, ok := w.After(tc.a, tc.want)
			if !ok || at.After(tc.b) || w.Between(tc.a, at) != tc.want || w.Between(tc.a, at.Add(-time.Nanosecond)) >= tc.want {
				t.Errorf("After(%s) = %v, %v; want the first moment with that waking time, not after %v", tc.want, at, ok, tc.b)
			}
		})
	}
}

func TestWakingAfterNoWakingTime(t *testing.T) {
	t.Parallel()
	q, _ := ParseQuietHours("08:00-23:00")
	var r Rhythm
	r.Messages, r.Days = RhythmMinMessages, RhythmMinDays
	r.SleepMask = 1<<23 | 0xff // 23:00–08:00
	w := NewWaking(q, &r, nil)
	a := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	if got := w.Between(a, a.Add(72*time.Hour)); got != 0 {
		t.Errorf("Between = %s over days without waking time, want 0", got)
	}
	if at, ok := w.After(a, time.Minute); ok {
		t.Errorf("After = %v, true; want false: the waking time never grows", at)
	}
}

func TestWakingAllocatesNothing(t *testing.T) {
	q, _ := ParseQuietHours("22:30-08:30")
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	var r Rhythm
	r.Messages, r.Days, r.SleepMask = RhythmMinMessages, RhythmMinDays, 0x0ff0
	a := time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC)
	var sum time.Duration
	allocs := testing.AllocsPerRun(100, func() { sum += NewWaking(q, &r, berlin).Between(a, a.Add(30*time.Hour)) })
	if allocs != 0 || sum == 0 {
		t.Errorf("Between: %v allocs (sum %s); want 0", allocs, sum)
	}
}
