package sim

import (
	"strings"
	"testing"
	"time"
)

// TestTimingFigures: on the rhythm scenarios no follow-up goes into the user's inferred
// sleep, no two of anima's first messages leave at the same minute offset from their
// trigger, and every due check-in is sent or carried by a reply within a day; the summary
// prints the figures.
func TestTimingFigures(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"night-owl", "shift-worker"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tl := runExample(t, name)
			f := tl.measure()
			if !f.profile.Ready() {
				t.Fatalf("profile not ready after %d days: %d messages over %d days", tl.sc.Days, f.profile.Messages, f.profile.Days)
			}
			if f.sends < 4 || f.judged == 0 {
				t.Fatalf("%d sends, %d judged: too few to measure", f.sends, f.judged)
			}
			if f.inside*5 < f.judged*4 {
				t.Errorf("%d of %d judged sends inside the user's active hours (as the gate saw them); want at least 80%%", f.inside, f.judged)
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
			for _, want := range []string{"inside the user's active hours, from day 8", "distinct minute offsets", "check-ins:", "in the user's inferred sleep"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("summary lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}
