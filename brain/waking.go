package brain

import (
	"math/bits"
	"time"
)

// Waking is the part of a person's day that counts as waking time: outside the quiet
// hours and, once their rhythm is Ready, outside their inferred sleep, read on the wall
// clock of their zone. Silence is counted in it (Between): a night inside quiet hours or
// sleep builds no social pressure, so a silence that began in the evening comes due in
// the person's day, not the minute quiet hours end. A Waking is a small value; nothing
// it does allocates.
type Waking struct {
	quiet QuietHours
	sleep uint32 // a bit per hour of the day of inferred sleep (none before Ready)
	loc   *time.Location
}

// NewWaking returns the waking time of a person with quiet hours q, rhythm r (nil or not
// Ready: quiet hours alone) and zone loc (nil: UTC).
func NewWaking(q QuietHours, r *Rhythm, loc *time.Location) Waking {
	if loc == nil {
		loc = time.UTC
	}
	w := Waking{quiet: q, loc: loc}
	if r != nil && r.Ready() {
		w.sleep = r.SleepMask
	}
	return w
}

const day = 24 * time.Hour

// Between is the waking time from a to b (0 when a is zero or b is not after a). It is
// measured on the wall clock: an hour a daylight saving change skips or repeats counts
// as the clock shows it.
func (w Waking) Between(a, b time.Time) time.Duration {
	if a.IsZero() || !b.After(a) {
		return 0
	}
	return w.BetweenWalls(w.Wall(a), w.Wall(b))
}

// BetweenWalls is Between for two moments given as Wall readings (x not after y): a
// caller that keeps the readings of moments it sees again saves the zone lookups.
func (w Waking) BetweenWalls(x, y int64) time.Duration {
	if y <= x {
		return 0
	}
	return AwakeBetween(x, w.asleepTo(x), y, w.asleepTo(y))
}

// AwakeBetween is BetweenWalls(x, y) from readings a caller kept: the Wall readings x and y
// and their AsleepTo, ax and ay.
func AwakeBetween(x, ax, y, ay int64) time.Duration {
	if y <= x {
		return 0
	}
	return max(0, time.Duration((y-x)-(ay-ax)))
}

// After is the first moment at which the waking time since a reaches d: a itself for d ≤
// 0; false when the day has no waking time at all (quiet hours and sleep cover it) or
// the moment lies beyond 10,000 days.
func (w Waking) After(a time.Time, d time.Duration) (time.Time, bool) {
	if d <= 0 {
		return a, true
	}
	awake := day - time.Duration(w.asleepDay())
	if awake <= 0 || d/awake > 10_000 {
		return time.Time{}, false
	}
	// Within this many days the waking time passes d; Between is monotone in its end, so
	// the first moment is found by bisection.
	lo, hi := time.Duration(0), (d/awake+2)*day
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if w.Between(a, a.Add(mid)) >= d {
			hi = mid
		} else {
			lo = mid
		}
	}
	return a.Add(hi), true
}

// Wall is t on the wall clock of w's zone, in nanoseconds since 1970-01-01 00:00 there.
func (w Waking) Wall(t time.Time) int64 {
	_, off := t.In(w.loc).Zone()
	return t.UnixNano() + int64(off)*int64(time.Second)
}

// AsleepTo is the time not awake (quiet or asleep) from the wall clock's origin to the
// Wall reading x, for AwakeBetween: a caller that sees a moment again can keep it.
func (w Waking) AsleepTo(x int64) int64 { return w.asleepTo(x) }

// asleepTo is the time not awake (quiet or asleep) from the wall clock's origin to x.
func (w Waking) asleepTo(x int64) int64 {
	n, r := x/int64(day), x%int64(day)
	if r < 0 {
		n, r = n-1, r+int64(day)
	}
	return n*w.asleepDay() + w.asleepBefore(time.Duration(r))
}

// asleepDay is the time of a whole day not awake.
func (w Waking) asleepDay() int64 { return w.asleepBefore(day) }

// asleepBefore is the time of a day, from midnight to y (0 ≤ y ≤ 24 h), inside the quiet
// hours or an hour of inferred sleep.
func (w Waking) asleepBefore(y time.Duration) int64 {
	q := w.quietBefore(y)
	for m := w.sleep; m != 0; m &= m - 1 {
		h := time.Duration(bits.TrailingZeros32(m)) * time.Hour
		if y <= h {
			continue
		}
		end := min(y, h+time.Hour)
		q += (end - h) - (w.quietBefore(end) - w.quietBefore(h)) // the hour less its quiet part
	}
	return int64(q)
}

// quietBefore is the time of a day, from midnight to y, inside the quiet hours.
func (w Waking) quietBefore(y time.Duration) time.Duration {
	s, e, ok := w.quiet.Offsets()
	if !ok {
		return 0
	}
	if s < e {
		return min(max(y-s, 0), e-s)
	}
	return min(y, e) + max(y-s, 0)
}
