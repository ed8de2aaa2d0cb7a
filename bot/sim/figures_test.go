package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestTimingFigures: on the rhythm scenarios at least 60 % of anima's first messages in
// the first week and 80 % in the second fall inside the user's hours (issue 25: on main
// the first week had 0 of 10, 2 of 7 and 0 of 9), no follow-up goes into the user's
// inferred sleep, no two of anima's first messages leave at the same minute offset from
// their trigger, and every due check-in is sent or carried by a reply within a day; the
// summary prints the figures.
func TestTimingFigures(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"night-owl", "shift-worker", "evening-person"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tl := runExample(t, name)
			f := tl.measure()
			if !f.profile.Ready() {
				t.Fatalf("profile not ready after %d days: %d messages over %d days", tl.sc.Days, f.profile.Messages, f.profile.Days)
			}
			// Late, never early (issue 35): a person who comes every day is rarely written to
			// first (and hears what anima kept for them in a reply), so a run has few first
			// messages, and a week may have none: nothing of it went out of their hours.
			if f.sends < 2 {
				t.Fatalf("%d sends: too few to measure", f.sends)
			}
			if f.inside*5 < f.judged*4 {
				t.Errorf("%d of %d judged sends inside the user's active hours (as the gate saw them); want at least 80%%", f.inside, f.judged)
			}
			for i, w := range f.weeks {
				t.Logf("week %d: %d of %d first messages inside the user's hours", i+1, w.inside, w.sends)
				if want := []int{60, 80}[i]; w.inside*100 < w.sends*want {
					t.Errorf("week %d: %d of %d first messages inside the user's hours; want at least %d%%", i+1, w.inside, w.sends, want)
				}
			}
			if f.followupsAsleep != 0 {
				t.Errorf("%d of %d follow-ups in the inferred sleep", f.followupsAsleep, f.followups)
			}
			if f.offsets != f.sends {
				t.Errorf("%d sends at %d distinct minute offsets from their trigger; want all distinct", f.sends, f.offsets)
			}
			if f.offMin < 5*time.Minute {
				t.Errorf("a send %s after its trigger; want at least the jitter's 5 min", f.offMin)
			}
			if f.checkinsDue == 0 || f.checkinsInDay+f.checkinsCarried != f.checkinsDue {
				t.Errorf("check-ins: %d due, %d sent within a day, %d carried by a reply", f.checkinsDue, f.checkinsInDay, f.checkinsCarried)
			}
			var b strings.Builder
			if err := tl.writeSummary(&b); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"inside the user's active hours, from day 8", "first messages inside their hours", "in week 2, ",
				"different delays after the moment their rule allowed them", "check-ins:", "in the user's inferred sleep"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("summary lacks %q:\n%s", want, b.String())
				}
			}
			// Issue 26: the summary speaks in words, not the code's names.
			for _, code := range []string{"not-ready", "user=", "reply=", "concern_checkin", "followup", "* judged", "live active"} {
				if strings.Contains(b.String(), code) {
					t.Errorf("summary speaks in code (%q):\n%s", code, b.String())
				}
			}
		})
	}
}

// TestTheirHours: the user's hours are the scenario's, within an hour of its windows,
// across midnight, on the days a rule applies, a day off keeping them.
func TestTheirHours(t *testing.T) {
	t.Parallel()
	sc, err := ParseScenario([]byte(`days: 3
user:
  writes:
    - at: "18:40"
      jitter: 30m
    - at: "00:10"
      jitter: 20m
      days: [2]
  quiet_days: [3]
`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	tl := newTimeline(sc, brain.DefaultProactivePolicy(), time.UTC, start)
	tests := []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 3, 2, 17, 10, 0, 0, time.UTC), true}, // 18:40 − 30m − 1h
		{time.Date(2026, 3, 2, 17, 9, 0, 0, time.UTC), false}, // a minute earlier
		{time.Date(2026, 3, 2, 20, 10, 0, 0, time.UTC), true}, // 18:40 + 30m + 1h
		{time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), false},  // the morning
		{time.Date(2026, 3, 2, 22, 50, 0, 0, time.UTC), true}, // day 2's 00:10 − 20m − 1h, the evening before
		{time.Date(2026, 3, 3, 1, 30, 0, 0, time.UTC), true},  // day 2's 00:10 + 20m + 1h
		{time.Date(2026, 3, 4, 18, 40, 0, 0, time.UTC), true}, // day 3, a day off: the hours of the day
		{time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC), false},  // and only those
	}
	for _, tc := range tests {
		if got := tl.theirHours(tc.at); got != tc.want {
			t.Errorf("theirHours(%s) = %v, want %v", tc.at.Format("Mon 15:04"), got, tc.want)
		}
	}
}
