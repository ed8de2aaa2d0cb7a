package brain

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// ProactivePolicy is when anima may write first: the `proactive:` section of the
// configuration, converted once and shared by the aggregation layer (which applies it),
// the autonomic layer (its pressure curve), /status (which explains it) and `anima sim`.
type ProactivePolicy struct {
	// Enabled turns proactive contact (and follow-ups) on.
	Enabled bool
	// MinSilence is the silence after which anima may write first (pressure 0.5),
	// counted in the user's waking time (Waking).
	MinSilence time.Duration
	// Cooldown is the least time between two proactive wakes of a chat.
	Cooldown time.Duration
	// FollowupAfter is how long an awaiting_answer question waits before its one follow-up.
	FollowupAfter time.Duration
	// QuietHours is the daily window, in the user's zone, without proactive contact (nor
	// in the hour after it, unless the user has been seen then); silence inside it builds
	// no pressure.
	QuietHours QuietHours
	// MaxPerDay caps proactive wakes per chat per local day (0: none at all). Plain
	// missing-you pressure may not take the day's last wake when MaxPerDay is 2 or more:
	// it is kept for a due check-in or a follow-up.
	MaxPerDay int
	// Jitter spreads every threshold and window edge so that no two wakes land at the
	// same offset: min_silence, followup_after, cooldown, the ends of quiet hours and of
	// inferred sleep and the start of active hours are each passed 5 minutes plus up to
	// Jitter late, by the same seeded amount for one wake (0: exact thresholds). Every
	// one of them is a "not before", so the jitter only ever adds.
	Jitter time.Duration
	// Seed picks the jitter's sequence (with the chat): the same seed gives the same
	// timing, which is what keeps `anima sim` repeatable.
	Seed uint64
}

// DefaultProactivePolicy returns the policy's exact core: enabled, min_silence 6 h,
// cooldown 3 h, followup_after 3 h, quiet hours 22:30–08:30, max_per_day 2, and no
// jitter (the configuration's default adds jitter 1h).
func DefaultProactivePolicy() ProactivePolicy {
	return ProactivePolicy{
		Enabled:       true,
		MinSilence:    6 * time.Hour,
		Cooldown:      3 * time.Hour,
		FollowupAfter: 3 * time.Hour,
		QuietHours:    QuietHours{start: 22*time.Hour + 30*time.Minute, end: 8*time.Hour + 30*time.Minute},
		MaxPerDay:     2,
	}
}

// Pressure is the social pressure after silence for a chat whose proactive min_silence is
// minSilence: p = 1 − 2^(−silence/minSilence). It is 0 right after an exchange, 0.5 at
// minSilence, 0.75 at twice that, and tends to 1. The autonomic neuron and the
// aggregation's wake rule share this one curve.
func Pressure(silence, minSilence time.Duration) float64 {
	if silence <= 0 || minSilence <= 0 {
		return 0
	}
	return 1 - math.Exp2(-float64(silence)/float64(minSilence))
}

// Habituated is the silence proactive contact needs after n unanswered proactive
// messages: base × 2^n, and false when that overflows (contact is then out of reach).
func Habituated(base time.Duration, n int) (time.Duration, bool) {
	if n <= 0 {
		return base, true
	}
	if n >= 62 || base > math.MaxInt64>>n {
		return 0, false
	}
	return base << n, true
}

// QuietHours is a daily window "HH:MM-HH:MM" of wall-clock time in the user's zone, e.g.
// 22:30-08:30; it may wrap midnight. The start is inside the window, the end is not. The
// zero value is no quiet hours. Build one with ParseQuietHours (or decode its text form,
// "" for none); a malformed window cannot be represented.
type QuietHours struct {
	start, end time.Duration // offsets from local midnight; equal only in the zero value
}

// ParseQuietHours parses "HH:MM-HH:MM" (00:00–23:59, start and end different); "" is no
// quiet hours. The error says what is allowed, for a configuration message.
func ParseQuietHours(s string) (QuietHours, error) {
	if s == "" {
		return QuietHours{}, nil
	}
	a, b, found := strings.Cut(s, "-")
	if !found {
		return QuietHours{}, fmt.Errorf(`must be "HH:MM-HH:MM" such as "22:30-08:30", or "" for none; got %q`, s)
	}
	start, err := clockOffset(a)
	var end time.Duration
	if err == nil {
		end, err = clockOffset(b)
	}
	if err != nil {
		return QuietHours{}, fmt.Errorf(`must be "HH:MM-HH:MM" such as "22:30-08:30", or "" for none; got %q: %w`, s, err)
	}
	if start == end {
		return QuietHours{}, fmt.Errorf("start and end are both %s; use \"\" for no quiet hours", a)
	}
	return QuietHours{start: start, end: end}, nil
}

// IsZero reports whether q is no quiet hours.
func (q QuietHours) IsZero() bool { return q.start == q.end }

// Equal reports whether q and o are the same window.
func (q QuietHours) Equal(o QuietHours) bool { return q == o }

// Offsets returns the window as offsets from local midnight (start > end when it wraps
// midnight); ok is false when there are no quiet hours.
func (q QuietHours) Offsets() (start, end time.Duration, ok bool) {
	return q.start, q.end, !q.IsZero()
}

// String returns the window as "HH:MM-HH:MM", or "" for none.
func (q QuietHours) String() string {
	if q.IsZero() {
		return ""
	}
	return clockString(q.start) + "-" + clockString(q.end)
}

// MarshalText implements encoding.TextMarshaler: the String form.
func (q QuietHours) MarshalText() ([]byte, error) { return []byte(q.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseQuietHours.
func (q *QuietHours) UnmarshalText(b []byte) error {
	v, err := ParseQuietHours(string(b))
	if err != nil {
		return err
	}
	*q = v
	return nil
}

// Contains reports whether the wall-clock time of t in loc (nil: UTC) falls in the window.
func (q QuietHours) Contains(t time.Time, loc *time.Location) bool {
	if q.IsZero() {
		return false
	}
	if loc == nil {
		loc = time.UTC
	}
	return q.contains(wallOffset(t.In(loc)))
}

// ContainsWall reports whether the wall-clock time at (an offset from local midnight,
// taken modulo a day) falls in the window.
func (q QuietHours) ContainsWall(at time.Duration) bool {
	if q.IsZero() {
		return false
	}
	at %= 24 * time.Hour
	if at < 0 {
		at += 24 * time.Hour
	}
	return q.contains(at)
}

func (q QuietHours) contains(at time.Duration) bool {
	if q.start < q.end {
		return q.start <= at && at < q.end
	}
	return at >= q.start || at < q.end
}

// EndedWithin reports whether the wall-clock time of t in loc (nil: UTC) is outside the
// window and less than d after its end, read on the wall clock (d under a day).
func (q QuietHours) EndedWithin(t time.Time, loc *time.Location, d time.Duration) bool {
	if q.IsZero() || d <= 0 {
		return false
	}
	if loc == nil {
		loc = time.UTC
	}
	at := wallOffset(t.In(loc))
	if q.contains(at) {
		return false
	}
	since := (at - q.end + 24*time.Hour) % (24 * time.Hour)
	return since < d
}

// NextEnd returns the first moment at or after t that is outside the window: t itself
// when Contains(t, loc) is false, else the end of the window t is in. It follows the wall
// clock across daylight saving changes: an end the clock shows twice (set back) is the
// first of them not before t, an end the clock skips (set forward) is the jump.
func (q QuietHours) NextEnd(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	local := t.In(loc)
	at := wallOffset(local)
	if q.IsZero() || !q.contains(at) {
		return t
	}
	y, m, d := local.Date()
	if q.start > q.end && at >= q.start {
		d++ // in the part before midnight: the window ends tomorrow
	}
	return wallTime(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Add(q.end), loc, t)
}

// NextDay is the start of the day after t's in loc (nil: UTC): when a daily count such as
// max_per_day starts again.
func NextDay(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	return wallTime(time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC), loc, t)
}

// wallTime is the first moment not before notBefore at which the clock in loc shows wall
// (a date and time written in UTC), or, when the clock skips it, the moment it jumps past.
func wallTime(wall time.Time, loc *time.Location, notBefore time.Time) time.Time {
	var out time.Time
	// The zone's offsets a day and a half either side cover a daylight saving change.
	for _, probe := range [2]time.Duration{-36 * time.Hour, 36 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		c := wall.Add(-time.Duration(off) * time.Second)
		if wallOffset(c.In(loc)) == wallOffset(wall) && !c.Before(notBefore) && (out.IsZero() || c.Before(out)) {
			out = c
		}
	}
	if out.IsZero() { // skipped: the jump is where the earlier offset's reading passes wall
		_, off := wall.Add(-36 * time.Hour).In(loc).Zone()
		out, _ = wall.Add(-time.Duration(off) * time.Second).In(loc).ZoneBounds()
	}
	return out.In(loc)
}

// wallOffset is the wall-clock time of local as an offset from midnight.
func wallOffset(local time.Time) time.Duration {
	h, m, s := local.Clock()
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second
}

// clockOffset parses "HH:MM" (00:00–23:59) as an offset from midnight.
func clockOffset(s string) (time.Duration, error) {
	hh, mm, found := strings.Cut(s, ":")
	if !found {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	h, m := digits2(hh), digits2(mm)
	if h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, fmt.Errorf("%q is not a time between 00:00 and 23:59", s)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}

// digits2 returns the value of a two-digit decimal string, or -1.
func digits2(s string) int {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}

// clockString formats an offset from midnight as "HH:MM".
func clockString(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
