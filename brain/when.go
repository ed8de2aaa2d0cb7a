package brain

import (
	"fmt"
	"time"
)

// partOfDay names the part of the day of a local hour: night before 05:00 and from 22:00,
// morning until noon, afternoon until 17:00, evening until 22:00.
func partOfDay(hour int) string {
	switch {
	case hour < 5 || hour >= 22:
		return "night"
	case hour < 12:
		return "morning"
	case hour < 17:
		return "afternoon"
	}
	return "evening"
}

// dayDiff is how many calendar days in loc lie from a's date to b's.
func dayDiff(a, b time.Time, loc *time.Location) int {
	ya, ma, da := a.In(loc).Date()
	yb, mb, db := b.In(loc).Date()
	return int(time.Date(yb, mb, db, 12, 0, 0, 0, time.UTC).Sub(time.Date(ya, ma, da, 12, 0, 0, 0, time.UTC)) / (24 * time.Hour))
}

// WhenWords says in a person's words when t comes, seen at now in the zone loc: "within
// the hour", "later this evening", "tonight", "tomorrow morning", "late tonight" (after
// midnight), "on Friday evening", "on Friday night" (Friday's small hours say so too),
// "on Mon 12 Jan" a week or more ahead. A time not after now is "now".
func WhenWords(t, now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	if !t.After(now) {
		return "now"
	}
	lt, ln := t.In(loc), now.In(loc)
	part, days := partOfDay(lt.Hour()), dayDiff(ln, lt, loc)
	small := lt.Hour() < 5 // after midnight: it belongs to the night before
	switch {
	case t.Sub(now) < time.Hour:
		return "within the hour"
	case days == 0:
		if part == "night" {
			return "later tonight"
		}
		if part == partOfDay(ln.Hour()) {
			return "later this " + part
		}
		return "this " + part
	case days == 1 && small:
		return "late tonight"
	case days == 1:
		return "tomorrow " + part
	case days < 7:
		if small {
			return "on " + lt.AddDate(0, 0, -1).Weekday().String() + " night"
		}
		return "on " + lt.Weekday().String() + " " + part
	}
	return "on " + lt.Format("Mon 2 Jan")
}

// AgoWords says in a person's words when t was, seen at now in the zone loc: "just now",
// "25 minutes ago", "this morning", "earlier today", "last night", "yesterday evening",
// "on Tuesday", "12 days ago", "on 2 Jan".
func AgoWords(t, now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	d := now.Sub(t)
	lt, ln := t.In(loc), now.In(loc)
	days := dayDiff(lt, ln, loc)
	part := partOfDay(lt.Hour())
	switch {
	case d < 5*time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d minutes ago", int(d/time.Minute))
	case days == 0 && part == "night" && lt.Hour() < 5:
		return "last night"
	case days == 0 && part == partOfDay(ln.Hour()):
		return "earlier today"
	case days == 0:
		return "this " + part
	case days == 1 && part == "night":
		return "last night"
	case days == 1:
		return "yesterday " + part
	case days < 7:
		return "on " + lt.Weekday().String()
	case days < 31:
		return fmt.Sprintf("%d days ago", days)
	}
	return "on " + lt.Format("2 Jan")
}

// DayWords says in a person's words which calendar day date (YYYY-MM-DD, a day in loc) is,
// seen at now: "today", "tomorrow", "yesterday", "on Friday" within six days either way,
// else "on Mon 12 Jan". "" when date is not a date.
func DayWords(date string, now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	d, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		return ""
	}
	switch days := dayDiff(now.In(loc), d.Add(12*time.Hour), loc); {
	case days == 0:
		return "today"
	case days == 1:
		return "tomorrow"
	case days == -1:
		return "yesterday"
	case days > -7 && days < 7:
		return "on " + d.Weekday().String()
	}
	return "on " + d.Format("Mon 2 Jan")
}
