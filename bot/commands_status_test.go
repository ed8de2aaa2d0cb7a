package bot

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestNextProactiveFollowsHabituation: /status's earliest time uses the aggregator's
// min_silence × 2^unanswered, with no cap, and says nothing when that is out of reach.
func TestNextProactiveFollowsHabituation(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	c := &commands{policy: policy{Enabled: true, MinSilence: time.Hour, MaxPerDay: 2}}
	for _, tc := range []struct {
		name       string
		status     brain.ConversationStatus
		unanswered int
		want       time.Time
		wantOK     bool
	}{
		{"habituated", brain.StatusIdle, 2, now.Add(4 * time.Hour), true},
		{"past the old cap of 16", brain.StatusIdle, 17, now.Add(time.Hour << 17), true},
		{"out of reach", brain.StatusClosed, 20, time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := brain.CommandView{Now: now, Loc: time.UTC, Rel: brain.Relationship{Chat: 1, LastUserMsg: now,
				Status: tc.status, UnansweredProactive: tc.unanswered}}
			got, ok := c.nextProactive(v)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("nextProactive = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
