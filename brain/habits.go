package brain

import (
	"math"
	"time"
)

// Habits are the times of a person's day a Rhythm learns beside its hourly profile:
// their usual first message of a day (weekdays and weekends apart) and their typical gap
// between visits. Days run from RhythmDayStart to RhythmDayStart in the person's zone, so
// a night owl's message at 00:30 belongs to the evening before.
type Habits struct {
	// First is the usual time of the day's first message, in minutes after RhythmDayStart,
	// FirstDev its usual distance from that (both exponentially weighted, weight
	// habitWeight), FirstDays the days folded in; index 0 weekdays, 1 weekends.
	First     [2]float32 `json:"first,omitempty"`
	FirstDev  [2]float32 `json:"first_dev,omitempty"`
	FirstDays [2]int32   `json:"first_days,omitempty"`
	// Day is the number of the last habit day with a message (see habitDay).
	Day int32 `json:"day,omitempty"`
	// Gap is the typical time between two visits (messages at least habitVisit apart), in
	// minutes: the exponentially weighted geometric mean; Gaps the gaps folded in.
	Gap  float32 `json:"gap,omitempty"`
	Gaps int32   `json:"gaps,omitempty"`
	// Last is the time of the last message folded in (in order).
	Last time.Time `json:"last,omitzero"`
}

const (
	// RhythmDayStart is when a person's day begins for their habits: 04:00 local.
	RhythmDayStart = 4 * time.Hour
	// habitWeight is how much a new day (or gap) moves a habit: recent weeks count most.
	habitWeight = 0.25
	// habitVisit is the least time between two messages that makes them two visits.
	habitVisit = time.Hour
	// habitMinDays is how many days of a kind (weekday, weekend) a usual first time needs,
	// habitMinGaps how many visits' gaps a typical gap needs: habits are learned from the
	// first days, before the hourly profile is Ready.
	habitMinDays = 2
	habitMinGaps = 3
)

// habitDay numbers the person's day of local (days since 1970 of the date RhythmDayStart
// earlier) and says whether it is a weekend day.
func habitDay(local time.Time) (int32, bool) {
	d := local.Add(-RhythmDayStart)
	return localDay(d), weekend(d)
}

// WeekendDay reports whether t falls on a weekend day of the person's in loc, as the
// habits tell days apart (a day running from RhythmDayStart).
func WeekendDay(t time.Time, loc *time.Location) bool { return weekend(t.In(loc).Add(-RhythmDayStart)) }

// weekend reports whether d (a habit day's date) is a Saturday or a Sunday.
func weekend(d time.Time) bool { wd := d.Weekday(); return wd == time.Saturday || wd == time.Sunday }

// observeHabits folds a message at t (local in the person's zone) into the habits: the
// first message of a habit day moves that kind of day's usual first time, and a message a
// visit after the last one moves the typical gap. Messages older than the last one folded
// in are left out.
func (h *Habits) observeHabits(t, local time.Time) {
	if !h.Last.IsZero() && !t.After(h.Last) {
		return
	}
	if !h.Last.IsZero() {
		if g := t.Sub(h.Last); g >= habitVisit {
			m := float32(math.Log(g.Minutes()))
			if h.Gaps == 0 {
				h.Gap = m
			} else {
				h.Gap += habitWeight * (m - h.Gap)
			}
			h.Gaps++
		}
	}
	day, weekend := habitDay(local)
	if h.Last.IsZero() || day != h.Day {
		k := 0
		if weekend {
			k = 1
		}
		start := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, local.Location()).Add(RhythmDayStart)
		if local.Before(start) {
			start = start.AddDate(0, 0, -1)
		}
		m := float32(local.Sub(start).Minutes())
		if h.FirstDays[k] == 0 {
			h.First[k], h.FirstDev[k] = m, 30
		} else {
			h.FirstDev[k] += habitWeight * (float32(math.Abs(float64(m-h.First[k]))) - h.FirstDev[k])
			h.First[k] += habitWeight * (m - h.First[k])
		}
		h.FirstDays[k]++
		h.Day = day
	}
	h.Last = t
}

// TypicalGap is the person's typical time between two visits; 0 before habitMinGaps.
func (r *Rhythm) TypicalGap() time.Duration {
	if r.Habits.Gaps < habitMinGaps {
		return 0
	}
	return time.Duration(math.Exp(float64(r.Habits.Gap)) * float64(time.Minute))
}

// UsualFirst is, for the person's day that now falls on (in loc), when it began
// (RhythmDayStart), when they usually first write on such a day (weekday or weekend) and
// how far from it they usually are; ok is false while it has seen fewer than
// habitMinDays such days (Ready or not: a habit shows in the first days). It allocates
// nothing.
func (r *Rhythm) UsualFirst(now time.Time, loc *time.Location) (start, usual time.Time, dev time.Duration, ok bool) {
	if loc == nil {
		loc = time.UTC
	}
	local := now.In(loc)
	_, weekend := habitDay(local)
	k := 0
	if weekend {
		k = 1
	}
	h := &r.Habits
	if h.FirstDays[k] < habitMinDays {
		return time.Time{}, time.Time{}, 0, false
	}
	start = time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc).Add(RhythmDayStart)
	if local.Before(start) {
		start = start.AddDate(0, 0, -1)
	}
	usual = start.Add(time.Duration(float64(h.First[k]) * float64(time.Minute)))
	return start, usual, time.Duration(float64(h.FirstDev[k]) * float64(time.Minute)), true
}

// HabitKnown reports whether the usual first time of some kind of day (weekday or
// weekend) is known: the person keeps a rhythm anima has seen, on one kind of day at
// least.
func (r *Rhythm) HabitKnown() bool {
	return r.Habits.FirstDays[0] >= habitMinDays || r.Habits.FirstDays[1] >= habitMinDays
}
