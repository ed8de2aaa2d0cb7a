package brain_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

// owl folds in a night owl's fortnight in Auckland: every night at 00:30 and 02:10, and
// most evenings at 21:40.
func owl(t *testing.T, days int) (*brain.Rhythm, *time.Location) {
	t.Helper()
	loc := braintest.Zone(t, "Pacific/Auckland")
	var r brain.Rhythm
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, loc)
	for d := range days {
		day := start.AddDate(0, 0, d)
		r.Observe(day.Add(30*time.Minute), loc)
		r.Observe(day.Add(2*time.Hour+10*time.Minute), loc)
		if d%3 != 2 {
			r.Observe(day.Add(21*time.Hour+40*time.Minute), loc)
		}
	}
	return &r, loc
}

func TestRhythmLearnsActiveHoursAndSleep(t *testing.T) {
	t.Parallel()
	r, loc := owl(t, 14)
	if !r.Ready() {
		t.Fatalf("not ready after 14 days: %d messages over %d days", r.Messages, r.Days)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 17, h, m, 0, 0, loc) } // a Tuesday
	for _, tc := range []struct {
		h, m           int
		active, asleep bool
	}{
		{0, 40, true, false},
		{21, 50, true, false},
		{4, 0, false, true}, // the first hours after the last activity of the night
		{10, 30, false, true},
		{15, 0, false, false}, // awake, not usually around
	} {
		if got := r.Active(at(tc.h, tc.m), loc); got != tc.active {
			t.Errorf("Active(%02d:%02d) = %v, want %v", tc.h, tc.m, got, tc.active)
		}
		if got := r.Asleep(at(tc.h, tc.m), loc); got != tc.asleep {
			t.Errorf("Asleep(%02d:%02d) = %v, want %v", tc.h, tc.m, got, tc.asleep)
		}
	}
	// The most active hours are the core of the active ones: the owl writes at 00:30 and
	// 02:10 every day, at 21:40 on two days in three; 22:00–24:00 are active only between.
	tue := 2 * 24
	for _, tc := range []struct {
		h    int
		peak bool
	}{{0, true}, {21, true}, {22, false}, {15, false}} {
		if got := r.PeakAt(tue + tc.h); got != tc.peak {
			t.Errorf("PeakAt(Tuesday %02d:00) = %v, want %v", tc.h, got, tc.peak)
		}
	}
	if got := r.SleepHours(); len(got) != 8 || got[0] != 3 {
		t.Errorf("SleepHours() = %v, want 8 hours from 03:00", got)
	}
}

// TestSleepAtNight: someone who writes only before work and late in the evening is quiet
// all working day (a longer run than their night), and sleeps at night all the same.
func TestSleepAtNight(t *testing.T) {
	t.Parallel()
	loc := braintest.Zone(t, "America/Chicago")
	var r brain.Rhythm
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, loc)
	for d := range 14 {
		day := start.AddDate(0, 0, d)
		r.Observe(day.Add(6*time.Hour+40*time.Minute), loc)
		r.Observe(day.Add(21*time.Hour+30*time.Minute), loc)
		r.Observe(day.Add(22*time.Hour+5*time.Minute), loc)
	}
	got := r.SleepHours()
	if len(got) == 0 || got[0] != 23 || got[len(got)-1] != 5 {
		t.Errorf("SleepHours() = %v, want 23:00 to 05:00", got)
	}
	if r.Asleep(time.Date(2026, 3, 17, 14, 0, 0, 0, loc), loc) {
		t.Error("asleep at 14:00, in the working day")
	}
}

func TestRhythmNeedsHistory(t *testing.T) {
	t.Parallel()
	r, loc := owl(t, 4) // 11 messages over 4 days
	if r.Ready() {
		t.Fatalf("ready after %d messages over %d days; want %d over %d", r.Messages, r.Days, brain.RhythmMinMessages, brain.RhythmMinDays)
	}
	night := time.Date(2026, 3, 3, 4, 0, 0, 0, loc)
	if r.Asleep(night, loc) || r.Active(night.Add(-3*time.Hour-20*time.Minute), loc) {
		t.Error("a profile that is not ready answers: asleep or active")
	}
}

// TestRhythmDecay: a week's habit fades with a half-life of two weeks, so a new habit
// takes over the active hours.
func TestRhythmDecay(t *testing.T) {
	t.Parallel()
	var r brain.Rhythm
	loc := time.UTC
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, loc)
	r.Observe(start, loc)
	r.Observe(start.Add(brain.RhythmHalfLife), loc) // same hour of the week, two weeks on
	if got := r.Weights[1*24+9]; got < 1.49 || got > 1.51 {
		t.Errorf("weight after two weeks and a second message = %v, want 1.5", got)
	}
	// Six weeks of a new evening habit, then the old morning hour is no longer active.
	old := &brain.Rhythm{}
	for d := range 7 * 4 {
		old.Observe(start.AddDate(0, 0, d), loc)
	}
	for d := range 7 * 6 {
		old.Observe(start.AddDate(0, 0, 28+d).Add(10*time.Hour), loc)
	}
	if old.Active(start.AddDate(0, 0, 70), loc) || !old.Active(start.AddDate(0, 0, 70).Add(10*time.Hour), loc) {
		t.Error("after six weeks of evenings the mornings of a month before still count as active")
	}
}

// TestRhythmOldRecord: a relationship stored before profiles existed decodes with an empty
// profile (not ready), and a profile survives a JSON round trip.
func TestRhythmOldRecord(t *testing.T) {
	t.Parallel()
	var rel brain.Relationship
	if err := json.Unmarshal([]byte(`{"chat":1,"user":1,"last_user_msg":"2026-03-02T10:00:00Z","social_pressure":0.2,"unanswered_proactive":0,"proactive_today":0}`), &rel); err != nil {
		t.Fatal(err)
	}
	if rel.Rhythm.Ready() || rel.Rhythm.Messages != 0 {
		t.Errorf("old record decodes with rhythm %+v", rel.Rhythm)
	}
	r, loc := owl(t, 14)
	rel.Rhythm = *r
	b, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	var back brain.Relationship
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 17, 0, 40, 0, 0, loc)
	got := back.Rhythm
	if !got.At.Equal(r.At) || got.Weights != r.Weights || got.ActiveMask != r.ActiveMask || got.SleepMask != r.SleepMask ||
		got.Messages != r.Messages || got.Days != r.Days || !got.Active(now, loc) {
		t.Error("profile changed in a JSON round trip")
	}
}

// TestOwnMessage: an answer to anima's first contact and the conversation it opens are
// not the user's own rhythm; a message after a silence is.
func TestOwnMessage(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var r brain.Relationship
	step := func(d time.Duration, want bool) {
		t.Helper()
		at = at.Add(d)
		if got := r.OwnMessage(at, time.UTC); got != want {
			t.Errorf("message at %s: own %v, want %v", at.Format("15:04"), got, want)
		}
		r.MarkUserMessage(at)
		r.MarkSent(at.Add(time.Minute), brain.KindReply)
	}
	step(0, true)
	r.MarkSent(at.Add(6*time.Hour), brain.KindProactive)
	step(7*time.Hour, false)    // the answer
	step(30*time.Minute, false) // the conversation it opened
	step(3*time.Hour, true)     // later, of their own accord
	r.MarkSent(at.Add(time.Hour), brain.KindProactive)
	step(4*time.Hour, true)    // an opener answered hours later: they came when they are around
	step(30*time.Minute, true) // and the conversation they came for

	// Once 09:00 is one of their hours, an answer then is theirs too; one at 20:00 is not.
	r.Rhythm.Observe(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), time.UTC)
	at = time.Date(2026, 3, 3, 8, 0, 0, 0, time.UTC)
	r.MarkSent(at, brain.KindProactive)
	step(time.Hour, true)
	at = time.Date(2026, 3, 3, 19, 0, 0, 0, time.UTC)
	r.MarkSent(at, brain.KindProactive)
	step(time.Hour, false)
}

// TestSeenBeforeReady: the hours a person has been seen in count from their first
// messages (an hour seen on the only day so far is a habit of every day), while Active
// waits for Ready.
func TestSeenBeforeReady(t *testing.T) {
	t.Parallel()
	var r brain.Rhythm
	mon := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, h := range []time.Duration{18*time.Hour + 40*time.Minute, 20*time.Hour + 15*time.Minute} {
		r.Observe(mon.Add(h), time.UTC)
	}
	thu := mon.AddDate(0, 0, 3)
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{thu.Add(19 * time.Hour), true},
		{thu.Add(17 * time.Hour), true}, // a neighbour of a habit hour
		{thu.Add(9 * time.Hour), false},
		{thu.Add(14 * time.Hour), false},
	} {
		if got := r.Seen(tc.at, time.UTC); got != tc.want {
			t.Errorf("Seen(%s) = %v, want %v", tc.at.Format("Mon 15:04"), got, tc.want)
		}
		if r.Active(tc.at, time.UTC) {
			t.Errorf("Active(%s) before the profile is Ready", tc.at.Format("Mon 15:04"))
		}
	}
	var none brain.Rhythm
	if none.Seen(thu.Add(19*time.Hour), time.UTC) {
		t.Error("an empty profile has seen the person")
	}
}

// TestRhythmStoredCompactly (issue 37): the 168 hourly weights every relationship holds,
// rewritten at every flush, are stored as a bitmap of the hours with weight and their
// float32 bits — exact, a third of the JSON array they were — and the array a store
// written before still decodes.
func TestRhythmStoredCompactly(t *testing.T) {
	t.Parallel()
	r, _ := owl(t, 14)
	old, err := json.Marshal([hoursPerWeekForTest]float32(r.Weights))
	if err != nil {
		t.Fatal(err)
	}
	now, err := json.Marshal(r.Weights)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("weights: %d bytes as an array, %d now", len(old), len(now))
	if 2*len(now) > len(old) {
		t.Errorf("weights take %d bytes, want at most half of the array's %d", len(now), len(old))
	}
	for _, raw := range [][]byte{now, old} {
		var back brain.HourWeights
		if err := json.Unmarshal(raw, &back); err != nil || back != r.Weights {
			t.Errorf("%.40s… decodes to other weights (err %v)", raw, err)
		}
	}
	for _, bad := range []string{`"!!"`, `"AAAA"`, `[1,2]x`, `3`} {
		var w brain.HourWeights
		if err := json.Unmarshal([]byte(bad), &w); err == nil {
			t.Errorf("%s decodes", bad)
		}
	}
}

const hoursPerWeekForTest = 7 * 24
