package aggregation

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestSilenceInWakingTime: silence inside quiet hours builds no pressure, so an evening's
// silence comes due the next day, not on the minute quiet hours end; before the rhythm is
// Ready the hours the user has been seen in so far are preferred, and the hour after
// quiet hours is used only by a user seen then. NextProactive, asked right after the
// exchange, says the same time.
func TestSilenceInWakingTime(t *testing.T) {
	t.Parallel()
	monday := time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC) // the last exchange
	seen := func(at ...string) brain.Rhythm {
		var r brain.Rhythm
		for _, s := range at {
			c, err := time.Parse("15:04", s)
			if err != nil {
				t.Fatal(err)
			}
			r.Observe(time.Date(2026, 3, 2, c.Hour(), c.Minute(), 0, 0, time.UTC), time.UTC)
		}
		if r.Ready() {
			t.Fatal("the rhythm is Ready: the case is about the first days")
		}
		return r
	}
	tests := []struct {
		name       string
		minSilence time.Duration
		rhythm     brain.Rhythm
		want       time.Time
	}{
		// 21:00–22:30 and 08:30–13:00: six waking hours.
		{"never seen: six waking hours", 6 * time.Hour, brain.Rhythm{}, time.Date(2026, 3, 3, 13, 0, 0, 0, time.UTC)},
		{"seen in the evening: their evening", 6 * time.Hour, seen("18:40", "20:15", "22:05"), time.Date(2026, 3, 3, 17, 0, 0, 0, time.UTC)},
		// Due at 22:00, outside the hours seen; the morning after quiet hours was seen.
		{"seen in the morning: right after quiet hours", time.Hour, seen("08:40", "09:10"), time.Date(2026, 3, 3, 8, 30, 0, 0, time.UTC)},
		// Due at 09:00 (1 h 30 before quiet hours, 30 min after); never seen then: 09:30.
		{"never seen: not in the hour after quiet hours", 2 * time.Hour, brain.Rhythm{}, time.Date(2026, 3, 3, 9, 30, 0, 0, time.UTC)},
		// Seen at 12:10: the hours around it (11–14) are theirs.
		{"seen around noon: their noon", 2 * time.Hour, seen("12:10"), time.Date(2026, 3, 3, 11, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := brain.DefaultProactivePolicy() // quiet hours 22:30–08:30, no jitter
			cfg.MinSilence = tc.minSilence
			s := newSim(t, cfg, time.UTC, monday)
			rel := s.talk(1, brain.StatusIdle)
			rel.Rhythm = tc.rhythm
			next, ok := s.agg.NextProactive(s.now, rel, time.UTC, nil)
			s.run(48*time.Hour, time.Minute)
			at := s.proactive()
			if len(at) == 0 {
				t.Fatal("no proactive wake in two days")
			}
			if !at[0].Equal(tc.want) {
				t.Errorf("first wake at %s, want %s", at[0].Format("Mon 15:04"), tc.want.Format("Mon 15:04"))
			}
			if !ok || !next.Equal(at[0]) {
				t.Errorf("NextProactive = %s, %v; the wake came at %s", next.Format("Mon 15:04"), ok, at[0].Format("Mon 15:04"))
			}
		})
	}
}
