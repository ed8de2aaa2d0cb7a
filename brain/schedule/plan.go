package schedule

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/anima-bot/anima/brain"
)

// Limits on what may be scheduled.
const (
	// MaxAhead is how far ahead a one-shot item may be due.
	MaxAhead = 366 * 24 * time.Hour
	// MinCronInterval is the shortest gap allowed between two firings of a recurring item.
	MinCronInterval = 15 * time.Minute
	// PastGrace is how far in the past an absolute time may be and still be accepted (it
	// then fires at once).
	PastGrace      = time.Minute
	maxNoteRunes   = 500
	maxReasonRunes = 500
	maxCronBytes   = 100
	maxDelaySecs   = 365 * 24 * 3600
)

// ErrInvalid is wrapped by every Plan and ParseCron error: the request itself is wrong.
var ErrInvalid = errors.New("invalid schedule")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// localLayouts are the accepted forms of `at` without a zone, read in the user's zone.
var localLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05"}

// PlanArgs is what Plan builds a schedule item from.
type PlanArgs struct {
	// Chat and User are where the item fires and whom it is for.
	Chat, User int64
	// Note is what to remind of; Reason, optional, why.
	Note, Reason string
	// Exactly one of DelaySeconds (1 s to 1 year), At (RFC 3339, or "2006-01-02T15:04"
	// read in Zone; up to a minute in the past means now) and Cron (a standard 5-field
	// spec or a descriptor such as @daily, read in Zone, firing at most every 15 minutes)
	// is set.
	DelaySeconds *int64
	At           *string
	Cron         *string
	// Now is the time the request is made.
	Now time.Time
	// Zone reads At and Cron; nil is the scheduler's DefaultZone.
	Zone *time.Location
}

// Plan builds a schedule item (not yet stored) from a (see PlanArgs). Kind is reminder;
// callers set followup. Errors wrap ErrInvalid and say what is allowed.
func (s *Scheduler) Plan(a PlanArgs) (brain.ScheduleItem, error) {
	note, at, cronSpec, now, loc := a.Note, a.At, a.Cron, a.Now, a.Zone
	if loc == nil {
		loc = s.zone
	}
	note = strings.TrimSpace(note)
	if note == "" {
		return brain.ScheduleItem{}, invalid("note must not be empty")
	}
	if at != nil && strings.TrimSpace(*at) == "" {
		at = nil
	}
	if cronSpec != nil && strings.TrimSpace(*cronSpec) == "" {
		cronSpec = nil
	}
	given := 0
	for _, set := range []bool{a.DelaySeconds != nil, at != nil, cronSpec != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return brain.ScheduleItem{}, invalid("give exactly one of delay_seconds, at or cron (got %d)", given)
	}
	item := brain.ScheduleItem{
		ID:      NewID(),
		Chat:    a.Chat,
		User:    a.User,
		Note:    brain.TruncateRunes(note, maxNoteRunes),
		Reason:  brain.TruncateRunes(strings.TrimSpace(a.Reason), maxReasonRunes),
		Created: now,
		Kind:    brain.KindReminder,
	}
	switch {
	case a.DelaySeconds != nil:
		d := *a.DelaySeconds
		if d < 1 || d > maxDelaySecs {
			return brain.ScheduleItem{}, invalid("delay_seconds must be between 1 and %d (a year), got %d", maxDelaySecs, d)
		}
		item.Due = now.Add(time.Duration(d) * time.Second)
	case at != nil:
		due, err := parseAt(strings.TrimSpace(*at), loc)
		if err != nil {
			return brain.ScheduleItem{}, err
		}
		switch {
		case due.Before(now.Add(-PastGrace)):
			return brain.ScheduleItem{}, invalid("at %s is in the past (now is %s)", *at, now.In(loc).Format(time.RFC3339))
		case due.Before(now):
			due = now
		case due.Sub(now) > MaxAhead:
			return brain.ScheduleItem{}, invalid("at %s is more than a year ahead; use cron for yearly reminders", *at)
		}
		item.Due = due
	default:
		spec := strings.TrimSpace(*cronSpec)
		// The zone is stored by name to advance the item later: it must be an IANA one.
		if _, err := time.LoadLocation(loc.String()); err != nil {
			return brain.ScheduleItem{}, invalid("recurring items need a named zone (such as Europe/Berlin), not %q", loc.String())
		}
		sched, err := ParseCron(spec)
		if err != nil {
			return brain.ScheduleItem{}, err
		}
		next, err := checkCron(sched, spec, now.In(loc))
		if err != nil {
			return brain.ScheduleItem{}, err
		}
		item.Cron, item.Zone, item.Due = spec, loc.String(), next
	}
	return item, nil
}

func parseAt(at string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t, nil
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, at, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, invalid("at %q is not a time: use RFC 3339 (2026-03-01T15:04:00+01:00) or local 2026-03-01T15:04", at)
}

// ParseCron parses a standard 5-field cron spec ("0 9 * * 1-5") or a descriptor (@daily,
// @weekly, @every 1h). Zone prefixes (TZ=, CRON_TZ=) are refused: items are read in the
// user's zone. It never panics; errors wrap ErrInvalid.
func ParseCron(spec string) (sched cron.Schedule, err error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "":
		return nil, invalid("cron spec is empty")
	case len(spec) > maxCronBytes:
		return nil, invalid("cron spec is longer than %d bytes", maxCronBytes)
	case hasZonePrefix(spec):
		return nil, invalid("cron spec %q must not set a zone (TZ=, CRON_TZ=): it is read in the user's zone", spec)
	}
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, invalid("cron spec %q is malformed", spec)
		}
	}()
	sched, err = cron.ParseStandard(spec)
	if err != nil {
		return nil, invalid("cron spec %q: %s (want 5 fields: minute hour day-of-month month day-of-week, or @daily, @weekly…)", spec, err.Error())
	}
	return sched, nil
}

func hasZonePrefix(spec string) bool {
	u := strings.ToUpper(spec)
	return strings.HasPrefix(u, "TZ=") || strings.HasPrefix(u, "CRON_TZ=")
}

// checkCron returns the first firing after now and refuses specs that never fire or fire
// more often than MinCronInterval.
func checkCron(sched cron.Schedule, spec string, now time.Time) (next time.Time, err error) {
	defer func() {
		if r := recover(); r != nil {
			next, err = time.Time{}, invalid("cron spec %q is malformed", spec)
		}
	}()
	next = sched.Next(now)
	if next.IsZero() {
		return time.Time{}, invalid("cron spec %q never fires", spec)
	}
	prev := next
	for range 48 {
		t := sched.Next(prev)
		if t.IsZero() {
			break
		}
		if t.Sub(prev) < MinCronInterval {
			return time.Time{}, invalid("cron spec %q fires more often than every %s", spec, MinCronInterval)
		}
		prev = t
	}
	return next, nil
}

// nextAfter is the first firing of a stored recurring item after now, in its zone.
func nextAfter(item brain.ScheduleItem, now time.Time) (time.Time, error) {
	sched, err := ParseCron(item.Cron)
	if err != nil {
		return time.Time{}, err
	}
	loc := time.UTC
	if item.Zone != "" {
		if loc, err = time.LoadLocation(item.Zone); err != nil {
			return time.Time{}, fmt.Errorf("zone %q of schedule %s: %w", item.Zone, item.ID, err)
		}
	}
	next := sched.Next(now.In(loc))
	if next.IsZero() {
		return time.Time{}, invalid("cron spec %q never fires again", item.Cron)
	}
	return next, nil
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns a short random schedule id: 6 lower-case base32 characters.
func NewID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(idEncoding.EncodeToString(b[:]))[:6]
}

// validID reports whether id could be one of NewID's.
func validID(id string) bool {
	if len(id) != 6 {
		return false
	}
	for _, c := range id {
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}
