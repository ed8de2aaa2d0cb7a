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
	// rhythmSleepMax is the longest inferred sleep, in hours. rhythmSleepMin is the
	// shortest run of quiet hours through rhythmDeepNight (03:00) that is taken for sleep
	// over a longer run elsewhere: someone quiet all working day and at night sleeps at
	// night.
	rhythmSleepMax  = 8
	rhythmSleepMin  = 4
	rhythmDeepNight = 3
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
	Weights HourWeights `json:"weights"`
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
// hours (wrapping midnight) — the run through 03:00 when it is at least rhythmSleepMin
// hours long: a person goes to sleep some time after their last activity of the day.
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
	// The circular runs of quiet hours: start from an hour that is not quiet. The run
	// through rhythmDeepNight wins when it is long enough to sleep in; else the longest.
	start := -1
	for h, w := range day {
		if w >= rhythmLow*peak {
			start = h
			break
		}
	}
	bestLen, bestFirst, nightLen, nightFirst, run, night := 0, 0, 0, 0, 0, false
	for i := 1; i <= 24; i++ {
		h := (start + i) % 24
		if day[h] >= rhythmLow*peak {
			run, night = 0, false
			continue
		}
		run++
		first := (h - run + 1 + 24) % 24
		if run > bestLen {
			bestLen, bestFirst = run, first
		}
		if night = night || h == rhythmDeepNight; night {
			nightLen, nightFirst = run, first
		}
	}
	if nightLen >= rhythmSleepMin {
		bestLen, bestFirst = nightLen, nightFirst
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
