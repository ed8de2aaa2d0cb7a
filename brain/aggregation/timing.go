package aggregation

import (
	"math"
	"time"

	"github.com/anima-bot/anima/brain"
)

// This file holds the humane side of rule 4's timing: the jitter that keeps wakes off
// exact thresholds and window edges, and the rhythm gate that prefers the hours the user
// is usually around and never writes into their sleep.

// jitterMin is the least a jittered threshold or window edge is passed late by: never on
// its minute.
const (
	jitterMin = 5 * time.Minute
	// patience is how far ahead the rhythm gate looks for an active hour before it lets
	// a due check-in or follow-up go out at any waking hour instead; pressurePatience the
	// same for a plain proactive message, which nothing makes urgent, so it may wait
	// through a day on which the user's active hours fall in quiet hours or sleep.
	patience         = 24 * time.Hour
	pressurePatience = 36 * time.Hour
	// patienceStep is the resolution of that look-ahead.
	patienceStep = 30 * time.Minute
)

// atNight reports whether t falls in the fallback night, 22:00–07:00 in loc: no follow-up
// goes out in it while the user's rhythm has too little history to say when they sleep.
func atNight(t time.Time, loc *time.Location) bool {
	h := t.In(loc).Hour()
	return h >= 22 || h < 7
}

// phi is the golden ratio's fractional part: stepping by it spreads a sequence evenly.
const phi = 0.6180339887498949

// jitterU is where in its jitter range rel's next proactive wake falls, in [0, 1): a Weyl
// sequence, seeded by the policy's seed and the chat, stepped by the golden ratio per
// wake, so that successive wakes of a chat land at well-separated offsets (never the same
// minute for dozens of wakes) and the same seed repeats them. It allocates nothing.
func (a *Aggregator) jitterU(rel *brain.Relationship) float64 {
	h := splitmix(a.cfg.Seed ^ splitmix(uint64(rel.Chat)))
	u := float64(h>>11) / (1 << 53)
	_, f := math.Modf(u + float64(rel.ProactiveWakes)*phi)
	return f
}

// late is how long after a threshold or window edge the wake at u may go: jitterMin plus
// u × Jitter (0 without jitter). One wake uses one u for all its thresholds, so its
// offset from whichever let it out is the same, and successive wakes' offsets differ.
func (a *Aggregator) late(u float64) time.Duration {
	if a.cfg.Jitter <= 0 {
		return 0
	}
	return jitterMin + time.Duration(u*float64(a.cfg.Jitter))
}

// dawn is the span after the end of quiet hours in which anima writes first only to a
// user who has been seen then: the minute quiet hours end is not a person's morning.
const dawn = time.Hour

// quiet reports whether now is inside the quiet hours in loc, less than the edge jitter
// after their end, or less than dawn (and the jitter) after it at an hour rel's user has
// not been seen in (Rhythm.Seen, Ready or not: their own messages count from the first).
func (a *Aggregator) quiet(now time.Time, rel *brain.Relationship, loc *time.Location, u float64) bool {
	q, l := a.cfg.QuietHours, a.late(u)
	if q.Contains(now, loc) || q.EndedWithin(now, loc, l) {
		return true
	}
	return q.EndedWithin(now, loc, dawn+l) && !rel.Rhythm.Seen(now, loc)
}

// asleep reports whether rel's user is probably asleep at now (in loc): inside their
// inferred sleep or less than the edge jitter after it; with too little history, only a
// follow-up asks, and then the fallback night counts.
func (a *Aggregator) asleep(now time.Time, rel *brain.Relationship, loc *time.Location, u float64, followup bool) bool {
	r := &rel.Rhythm
	if !r.Ready() {
		return followup && (atNight(now, loc) || atNight(now.Add(-a.late(u)), loc))
	}
	return r.Asleep(now, loc) || r.Asleep(now.Add(-a.late(u)), loc)
}

// offHours reports whether a due wake of rel should wait for the user's most active
// hours: it is not inside them now (or is less than the edge jitter into them), and a
// time that is inside them, and outside quiet hours and sleep, comes within wait
// (patience or pressurePatience). Failing that, the same for any active hour. Prefer,
// don't starve: a user with no such hour within wait gets the wake at any waking hour.
// Before the rhythm is Ready the hours the user has been seen in so far (Rhythm.SeenAt)
// stand in for both: a first message goes where they have been seen; with no message of
// their own yet there is nothing to prefer.
//
// With peak false (a plain wake the late-never-early gate governs, lateHabit) only active
// hours are asked for.
func (a *Aggregator) offHours(now time.Time, rel *brain.Relationship, loc *time.Location, u float64, wait time.Duration, peak bool) bool {
	r := &rel.Rhythm
	if !r.Ready() && r.Messages == 0 {
		return false
	}
	// Stepped on the local wall clock (a daylight saving change within the day only
	// shifts the look-ahead by an hour): no zone lookups, nothing allocated.
	local := now.In(loc)
	h, m, _ := local.Clock()
	wall := time.Duration(int(local.Weekday())*24+h)*time.Hour + time.Duration(m)*time.Minute
	edge := wall - a.late(u)
	if !r.Ready() {
		if r.SeenAt(int(wall/time.Hour)) && r.SeenAt(int(edge/time.Hour)) {
			return false
		}
		return a.comes(r, wall, wait, r.SeenAt) || a.before(r, wall, wait, r.SeenAt, u)
	}
	if peak {
		if r.PeakAt(int(wall/time.Hour)) && r.PeakAt(int(edge/time.Hour)) {
			return false
		}
		if a.comes(r, wall, wait, r.PeakAt) {
			return true
		}
	}
	if r.ActiveAt(int(wall/time.Hour)) && r.ActiveAt(int(edge/time.Hour)) {
		return false
	}
	return a.comes(r, wall, wait, r.ActiveAt) || a.before(r, wall, wait, r.ActiveAt, u)
}

// before reports, for a user none of whose hours (in) comes outside quiet hours and sleep
// within wait — someone around only late at night, inside the quiet hours — whether now
// (wall) is not in the hour before one of theirs while such an hour comes within wait:
// the edge of the quiet hours nearest their own is preferred to any waking hour. Half the
// wake's jitter (at u), at most a quarter of an hour, into that hour: not on its minute,
// and inside a half hour left before quiet hours begin.
func (a *Aggregator) before(r *brain.Rhythm, wall, wait time.Duration, in func(int) bool, u float64) bool {
	ahead := func(h int) bool { return in((h + 1) % (7 * 24)) }
	if ahead(int(wall/time.Hour)) && ahead(int((wall-min(a.late(u)/2, 15*time.Minute))/time.Hour)) {
		return false
	}
	return a.comes(r, wall, wait, ahead)
}

// comes reports whether an hour of the week that is in (PeakAt or ActiveAt of r), and
// outside the inferred sleep and quiet hours, comes within wait after the local
// wall-clock time wall (since Sunday 00:00), stepping by patienceStep.
func (a *Aggregator) comes(r *brain.Rhythm, wall, wait time.Duration, in func(int) bool) bool {
	for d := patienceStep; d <= wait; d += patienceStep {
		at := wall + d
		hour := int(at / time.Hour)
		if in(hour) && !r.AsleepAt(hour) && !a.cfg.QuietHours.ContainsWall(at) {
			return true
		}
	}
	return false
}

// Late, never early: the margins by which a person's usual first message of the day
// must have passed without them before a plain proactive message goes out.
const (
	// lateMargin is the least margin; twice the usual spread of their first message is
	// used when it is more, up to lateMarginMax. The wake's jitter comes on top.
	lateMargin    = 45 * time.Minute
	lateMarginMax = 3 * time.Hour
	// preempt is the hour before a usual time in which a plain proactive message would
	// pre-empt the person's own.
	preempt = time.Hour
)

// early reports whether a plain proactive wake of rel at now (in loc) comes before the
// person would have written anyway. Once their habits are known (from their first days,
// before the hourly profile is Ready; until then the early days' rules stand alone):
// their wall-clock silence must be at least their typical gap
// between visits (Rhythm.TypicalGap), and a usual time of theirs must have passed without
// them (no message since the margin before it): today's first message (weekday or
// weekend, Rhythm.UsualFirst), once now is past it by the margin (lateMargin or twice its
// usual spread, at most lateMarginMax, plus the jitter at u); or, before the hour leading
// up to today's, yesterday's. It allocates nothing.
func (a *Aggregator) early(now time.Time, rel *brain.Relationship, loc *time.Location, u float64) bool {
	r := &rel.Rhythm
	if gap := r.TypicalGap(); gap > 0 && now.Sub(rel.LastExchange()) < gap {
		return true
	}
	usual, margin, ok := usualFirst(r, now, loc)
	if !ok {
		// Today's kind of day is not known yet. If the other kind is, the person keeps a
		// rhythm, just one not seen on such a day (a first Saturday of someone known on
		// weekdays): their lunch hour says nothing of it, so no plain first message today;
		// their own messages on such days teach it. Knowing none, the early days' rules.
		return r.HabitKnown()
	}
	switch {
	case !now.Before(usual.Add(margin + a.late(u))):
		return !rel.LastUserMsg.Before(usual.Add(-margin)) // today's passed: early if they came for it
	case !now.Before(usual.Add(-preempt)):
		return true // they are about to come, or may still
	}
	if brain.WeekendDay(now, loc) != brain.WeekendDay(now.Add(-24*time.Hour), loc) {
		// Yesterday was another kind of day (a Friday before a Saturday): that its usual
		// time passed without them says nothing of today's, still ahead.
		return true
	}
	if usual, margin, ok = usualFirst(r, now.Add(-24*time.Hour), loc); !ok {
		return true
	}
	return !rel.LastUserMsg.Before(usual.Add(-margin)) // yesterday's: early if they came for it
}

// preempts reports whether a first message at now would come just before the person
// usually comes on their own: today's usual first time (Rhythm.UsualFirst) is less than
// preempt ahead, or passed by less than its margin (and the jitter at u), and they have
// not come yet. A gated thought (a check-in, a share) waits then: if they come, the run
// that answers them carries it; if not, it goes once the margin has passed. It allocates
// nothing.
func (a *Aggregator) preempts(now time.Time, rel *brain.Relationship, loc *time.Location, u float64) bool {
	usual, margin, ok := usualFirst(&rel.Rhythm, now, loc)
	if !ok {
		return false
	}
	return !now.Before(usual.Add(-preempt)) && now.Before(usual.Add(margin+a.late(u))) &&
		rel.LastUserMsg.Before(usual.Add(-margin))
}

// usualFirst is when the person usually first writes on the day at t falls on (in loc)
// and the margin by which that time passes without them: lateMargin or twice the habit's
// spread, at most lateMarginMax; ok is false while the habit is not known (UsualFirst).
func usualFirst(r *brain.Rhythm, t time.Time, loc *time.Location) (usual time.Time, margin time.Duration, ok bool) {
	_, usual, dev, ok := r.UsualFirst(t, loc)
	return usual, min(max(lateMargin, 2*dev), lateMarginMax), ok
}

// lateHabit reports whether the late-never-early gate (early) governs a plain proactive
// wake of rel: its rhythm is Ready and knows the usual first time of now's day. The gate
// has then chosen the moment, so the rhythm gate (offHours) asks only for an active hour,
// not one of the peak hours, which are their usual times themselves.
func lateHabit(now time.Time, rel *brain.Relationship, loc *time.Location) bool {
	if !rel.Rhythm.Ready() {
		return false
	}
	_, _, _, ok := rel.Rhythm.UsualFirst(now, loc)
	return ok
}

// nextWaking returns the first time at or after t, within the wake's wait (see
// waitFor; earlySpan for a plain wake), that the rhythm gate lets a wake of rel through (see asleep and offHours),
// stepping by patienceStep; t when there is none in that span (the gate then lets it
// through at once, or the answer is as good as can be said).
func (a *Aggregator) nextWaking(t time.Time, rel *brain.Relationship, loc *time.Location, u float64, followup bool) time.Time {
	wait, span := waitFor(followup), waitFor(followup)
	if !followup {
		span = earlySpan
	}
	for c := t; c.Sub(t) <= span; c = c.Add(patienceStep) {
		peak := followup || !lateHabit(c, rel, loc)
		if !a.quiet(c, rel, loc, u) && !a.asleep(c, rel, loc, u, followup) && !a.offHours(c, rel, loc, u, wait, peak) &&
			(followup || !a.early(c, rel, loc, u)) {
			return c
		}
	}
	return t
}

// earlySpan is how far ahead nextWaking looks for a plain proactive wake: past a whole
// weekend the late-never-early gate holds (a kind of day not known yet) to the next
// day's usual time.
const earlySpan = 72 * time.Hour

// waitFor is how long rule 4's wake may wait for the user's active hours: a follow-up
// patience, a plain proactive message pressurePatience.
func waitFor(followup bool) time.Duration {
	if followup {
		return patience
	}
	return pressurePatience
}

// splitmix is SplitMix64's finaliser: a well-mixed hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
