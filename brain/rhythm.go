package brain

import (
	"math"
	"time"
)

// Rhythm constants: how a person's activity profile learns and when it is trusted.
const (
	// RhythmHalfLife is how fast old weeks fade from a profile: a message counts half as
	// much two weeks later.
	RhythmHalfLife = 14 * 24 * time.Hour
	// RhythmMinMessages and RhythmMinDays are the history a profile needs before it is
	// used (Ready): until then the proactive rules behave as without one.
	RhythmMinMessages = 20
	RhythmMinDays     = 5
	// RhythmAnswerWindow is the silence that ends a conversation anima's first contact
	// opened: until then the user's messages are not their own rhythm.
	RhythmAnswerWindow = 2 * time.Hour
	// rhythmSleepMax is the longest inferred sleep, in hours.
	rhythmSleepMax = 8
	// rhythmActive is the share of the busiest hour's score at which an hour counts as
	// active, rhythmHabit the share of days with the person around at an hour (neighbours
	// at half) at which that hour is active every day; rhythmLow the share of the busiest hour of the day below which an hour of the
	// day counts as quiet (a candidate for sleep).
	rhythmActive = 0.3
	rhythmHabit  = 0.5
	rhythmLow    = 0.1
	// rhythmPeak is the share of the busiest hour's score at which an hour is one of the
	// person's most active (Peak), or the share of days at which its hour of the day (its
	// own, neighbours aside) is.
	rhythmPeak = 0.5
)

// hoursPerWeek is the number of slots of a Rhythm: one per hour of the week.
const hoursPerWeek = 7 * 24

// Rhythm is when a person is usually around: an hour-of-week activity profile (168 slots,
// Sunday 00:00 first, in the person's zone) learned from the times of the messages they
// write of their own accord (the core loop leaves out answers to anima's first contact),
// old weeks fading with a half-life of RhythmHalfLife. It costs no model call: Observe
// folds a message in (applying the decay lazily, then), and the answers (Active, Asleep)
// are bitmasks derived at that moment, so reading them on a tick allocates nothing. The
// zero value is an empty profile (not Ready), which is what a relationship stored before
// profiles existed decodes to.
type Rhythm struct {
	// Weights is the decayed message count per hour of the week, as of At.
	Weights [hoursPerWeek]float32 `json:"weights"`
	// At is the time of the last message folded in: the weights are decayed to it.
	At time.Time `json:"at,omitzero"`
	// Messages and Days count the messages folded in and the distinct local days they fell
	// on (undecayed: they say how much history there is).
	Messages int   `json:"messages,omitempty"`
	Days     int   `json:"days,omitempty"`
	LastDay  int32 `json:"last_day,omitempty"`  // local day number of the last message
	LastHour int8  `json:"last_hour,omitempty"` // local hour of the last message
	// DayWeight is the decayed count of days with a message: what the weights of an hour
	// seen every day add up to.
	DayWeight float32 `json:"day_weight,omitempty"`
	// ActiveMask has a bit per hour of the week that is usually active; SleepMask a bit per
	// hour of the day (0–23) of inferred sleep. Both are derived by Observe.
	ActiveMask [3]uint64 `json:"active_mask,omitempty"`
	// PeakMask has a bit per active hour of the week that is among the most active (see
	// rhythmPeak): the core of the active hours, not their edges. Derived by Observe; a
	// profile stored before it existed has none until its next message.
	PeakMask  [3]uint64 `json:"peak_mask,omitempty"`
	SleepMask uint32    `json:"sleep_mask,omitempty"`
	// Habits: when the person usually first writes on a weekday (index 0) and on a
	// weekend day (1), and how long they usually stay away (see Observe). A profile
	// stored before they existed learns them from its next messages.
	Habits Habits `json:"habits,omitzero"`
}

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
	wd := d.Weekday()
	return localDay(d), wd == time.Saturday || wd == time.Sunday
}

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

// Observe folds a message the person wrote at t (read in their zone loc; nil: UTC) into the
// profile: the weights decay from At to t, the hour of t gains 1, and the active hours and
// inferred sleep are derived again. A message older than At counts at its decayed weight.
// The profile records presence, not volume: further messages in the same local hour of
// the same day as the last one count as history (Messages) but add no weight, so one
// long evening conversation does not outweigh being around every morning.
func (r *Rhythm) Observe(t time.Time, loc *time.Location) {
	if loc == nil {
		loc = time.UTC
	}
	local := t.In(loc)
	r.Habits.observeHabits(t, local)
	day, hour := localDay(local), int8(local.Hour())
	if r.Messages > 0 && day == r.LastDay && hour == r.LastHour {
		r.Messages++
		return
	}
	w := float32(1)
	switch {
	case r.At.IsZero():
		r.At = t
	case t.After(r.At):
		f := float32(math.Exp2(-float64(t.Sub(r.At)) / float64(RhythmHalfLife)))
		for i := range r.Weights {
			r.Weights[i] *= f
		}
		r.DayWeight *= f
		r.At = t
	default:
		w = float32(math.Exp2(-float64(r.At.Sub(t)) / float64(RhythmHalfLife)))
	}
	r.Weights[hourOfWeek(local)] += w
	r.Messages++
	if r.Days == 0 || day != r.LastDay {
		r.Days++
		r.DayWeight += w
	}
	r.LastDay, r.LastHour = day, hour
	r.derive()
}

// Ready reports whether the profile has enough history to be used: at least
// RhythmMinMessages messages over RhythmMinDays distinct days.
func (r *Rhythm) Ready() bool { return r.Messages >= RhythmMinMessages && r.Days >= RhythmMinDays }

// Active reports whether t (in loc) falls in an hour of the week the person is usually
// around; false while the profile is not Ready.
func (r *Rhythm) Active(t time.Time, loc *time.Location) bool {
	return r.Ready() && r.Seen(t, loc)
}

// PeakAt reports whether hour of the week slot (taken modulo a week) is among the
// person's most active; false while the profile is not Ready. The rhythm gate waits for
// one of these rather than the first active hour, whose edge a profile learned from a few
// weeks often moves.
func (r *Rhythm) PeakAt(slot int) bool {
	if !r.Ready() {
		return false
	}
	h := (slot%hoursPerWeek + hoursPerWeek) % hoursPerWeek
	return r.PeakMask[h/64]&(1<<(h%64)) != 0
}

// Seen reports whether t (in loc) falls in an hour of the week the person has been seen
// around so far: the active hours as learned from every message folded in, Ready or not
// (none before the first). Until the profile is Ready this is what the rhythm gate
// prefers: a person's messages from the first days count at once.
func (r *Rhythm) Seen(t time.Time, loc *time.Location) bool {
	if loc == nil {
		loc = time.UTC
	}
	return r.SeenAt(hourOfWeek(t.In(loc)))
}

// SeenAt is Seen for hour of the week slot (Sunday 00:00 is 0; taken modulo a week).
func (r *Rhythm) SeenAt(slot int) bool {
	h := (slot%hoursPerWeek + hoursPerWeek) % hoursPerWeek
	return r.ActiveMask[h/64]&(1<<(h%64)) != 0
}

// Asleep reports whether t (in loc) falls in the person's inferred sleep; false while the
// profile is not Ready.
func (r *Rhythm) Asleep(t time.Time, loc *time.Location) bool {
	if !r.Ready() {
		return false
	}
	if loc == nil {
		loc = time.UTC
	}
	return r.SleepMask&(1<<t.In(loc).Hour()) != 0
}

// ActiveAt reports whether hour of the week slot (Sunday 00:00 is 0; taken modulo a
// week) is active; false while the profile is not Ready. It is Active for a caller that
// steps through local wall-clock hours itself.
func (r *Rhythm) ActiveAt(slot int) bool { return r.Ready() && r.SeenAt(slot) }

// AsleepAt reports whether hour of the day hour (0–23, taken modulo a day) is in the
// inferred sleep; false while the profile is not Ready.
func (r *Rhythm) AsleepAt(hour int) bool {
	return r.Ready() && r.SleepMask&(1<<((hour%24+24)%24)) != 0
}

// ActiveHours returns, for each hour of the week (Sunday 00:00 first), whether it is
// active; all false while the profile is not Ready. The sim plot shades them.
func (r *Rhythm) ActiveHours() (out [hoursPerWeek]bool) {
	if !r.Ready() {
		return out
	}
	for h := range out {
		out[h] = r.ActiveMask[h/64]&(1<<(h%64)) != 0
	}
	return out
}

// SleepHours returns the hours of the day (0–23) of inferred sleep, in order from the
// first; none while the profile is not Ready.
func (r *Rhythm) SleepHours() []int {
	if !r.Ready() || r.SleepMask == 0 {
		return nil
	}
	first := 0
	for h := range 24 { // the run's first hour: in it, the hour before not
		if r.SleepMask&(1<<h) != 0 && r.SleepMask&(1<<((h+23)%24)) == 0 {
			first = h
			break
		}
	}
	var out []int
	for i := range 24 {
		if h := (first + i) % 24; r.SleepMask&(1<<h) != 0 {
			out = append(out, h)
		}
	}
	return out
}

// derive computes the active hours and the inferred sleep from the weights.
//
// An hour of the week scores its own weight, half of each neighbouring hour's (a person
// around at 21:50 is likely around at 21:10 too) and half the mean of that hour over the
// week's seven days (a habit seen on other days counts a little); it is active at a score
// of at least rhythmActive of the busiest hour's, or when its hour of the day is a daily
// habit (see rhythmHabit). Sleep is read from the hour-of-day
// profile (the seven days summed): hours below rhythmLow of the busiest hour are quiet,
// and the inferred sleep is the first rhythmSleepMax hours of the longest run of quiet
// hours (wrapping midnight): a person goes to sleep some time after their last activity of
// the day.
func (r *Rhythm) derive() {
	var day [24]float32
	for h, w := range r.Weights {
		day[h%24] += w
	}
	var score [hoursPerWeek]float32
	var best float32
	for h := range score {
		s := r.Weights[h] + 0.5*(r.Weights[(h+hoursPerWeek-1)%hoursPerWeek]+r.Weights[(h+1)%hoursPerWeek]) + 0.5*day[h%24]/7
		score[h] = s
		best = max(best, s)
	}
	// A daily habit: an hour of the day the person was around on a share of the days (with
	// half of each neighbour's share) of at least rhythmHabit is active on every day of the
	// week, so a habit seen on most days holds on a day it was missed.
	var habit, daily [24]bool
	if r.DayWeight > 0 {
		for h := range habit {
			share := (day[h] + 0.5*(day[(h+23)%24]+day[(h+1)%24])) / r.DayWeight
			habit[h] = share >= rhythmHabit
			daily[h] = day[h]/r.DayWeight >= rhythmPeak
		}
	}
	r.ActiveMask, r.PeakMask = [3]uint64{}, [3]uint64{}
	for h, s := range score {
		if best > 0 && (s >= rhythmActive*best || habit[h%24]) {
			r.ActiveMask[h/64] |= 1 << (h % 64)
		}
		if best > 0 && (s >= rhythmPeak*best || daily[h%24]) {
			r.PeakMask[h/64] |= 1 << (h % 64)
		}
	}

	var peak float32
	for _, w := range day {
		peak = max(peak, w)
	}
	r.SleepMask = 0
	if peak == 0 {
		return
	}
	// The longest circular run of quiet hours: start from an hour that is not quiet.
	start := -1
	for h, w := range day {
		if w >= rhythmLow*peak {
			start = h
			break
		}
	}
	bestLen, bestFirst, run := 0, 0, 0
	for i := 1; i <= 24; i++ {
		h := (start + i) % 24
		if day[h] < rhythmLow*peak {
			run++
			if run > bestLen {
				bestLen, bestFirst = run, (h-run+1+24)%24
			}
			continue
		}
		run = 0
	}
	for i := range min(bestLen, rhythmSleepMax) {
		r.SleepMask |= 1 << ((bestFirst + i) % 24)
	}
}

// hourOfWeek is the slot of local (Sunday 00:00 is 0).
func hourOfWeek(local time.Time) int { return int(local.Weekday())*24 + local.Hour() }

// localDay numbers local's date (days since 1970-01-01 as a date, zone aside).
func localDay(local time.Time) int32 {
	y, m, d := local.Date()
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}
