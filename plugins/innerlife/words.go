package innerlife

import (
	"regexp"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Concerns in a person's words: a concern reaches a prompt as "her presentation — she
// mentioned it on Tuesday evening, for Wednesday; you asked how it went on Wednesday
// evening", never with its id, salience, kind or an RFC 3339 time; the ids the
// innerlife_concern tool needs are on one line of their own (idsLine), the only place
// they appear. Relative words are anchored when the concern is opened: a day (today,
// tomorrow, …) becomes the concern's day, a span (next week, this weekend, next month)
// the span it named, in the summary's words.

// relativeDay matches the words that name a day relative to when they were said.
var relativeDay = regexp.MustCompile(`(?i)\s*\b(today|tonight|tomorrow|yesterday)\b`)

// anchorDay takes the relative day words out of summary, said at now in loc, and returns
// the summary without them and the day they named (YYYY-MM-DD; "" without one), so
// "presentation at work tomorrow" said on Tuesday is "presentation at work", for
// Wednesday — not "tomorrow" for ever after.
func anchorDay(summary string, now time.Time, loc *time.Location) (string, string) {
	summary = anchorSpan(summary, now, loc)
	m := relativeDay.FindStringSubmatch(summary)
	if m == nil {
		return summary, ""
	}
	day := now.In(zoneOr(loc))
	switch strings.ToLower(m[1]) {
	case "tomorrow":
		day = day.AddDate(0, 0, 1)
	case "yesterday":
		day = day.AddDate(0, 0, -1)
	}
	out := strings.TrimSpace(relativeDay.ReplaceAllString(summary, ""))
	if out == "" {
		out = summary
	}
	return out, day.Format(time.DateOnly)
}

// relativeSpan matches the words that name a week, a weekend or a month relative to when
// they were said.
var relativeSpan = regexp.MustCompile(`(?i)\b(this|next) (week|weekend|month)\b`)

// anchorSpan rewrites the relative spans of summary, said at now in loc, as the spans
// they named: "visiting next week" said on Wednesday 11 March is "visiting the week of 16
// March", "this weekend" "the weekend of 14 March", "next month" "in April" — a week after,
// "next week" would be wrong. Weeks start on Monday; on a weekend, "this weekend" is the
// one under way.
func anchorSpan(summary string, now time.Time, loc *time.Location) string {
	l := now.In(zoneOr(loc))
	today := time.Date(l.Year(), l.Month(), l.Day(), 12, 0, 0, 0, l.Location())
	return relativeSpan.ReplaceAllStringFunc(summary, func(m string) string {
		parts := strings.Fields(strings.ToLower(m))
		next := parts[0] == "next"
		switch parts[1] {
		case "week":
			monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
			if next {
				monday = monday.AddDate(0, 0, 7)
			}
			return "the week of " + monday.Format("2 January")
		case "weekend":
			sat := today.AddDate(0, 0, (int(time.Saturday)-int(today.Weekday())+7)%7)
			if today.Weekday() == time.Sunday {
				sat = today.AddDate(0, 0, -1)
			}
			if next {
				sat = sat.AddDate(0, 0, 7)
			}
			return "the weekend of " + sat.Format("2 January")
		}
		first := time.Date(today.Year(), today.Month(), 1, 12, 0, 0, 0, today.Location())
		if next {
			first = first.AddDate(0, 1, 0)
		}
		return "in " + first.Format("January")
	})
}

// parseDay reads the day a concern is about: YYYY-MM-DD, or today, tomorrow, yesterday or
// a weekday name (the next one, today's counting), in loc at now.
func parseDay(s string, now time.Time, loc *time.Location) (string, bool) {
	l := now.In(zoneOr(loc))
	s = strings.ToLower(strings.TrimSpace(s))
	if d, err := time.ParseInLocation(time.DateOnly, s, zoneOr(loc)); err == nil {
		return d.Format(time.DateOnly), true
	}
	switch s {
	case "today", "tonight":
		return l.Format(time.DateOnly), true
	case "tomorrow":
		return l.AddDate(0, 0, 1).Format(time.DateOnly), true
	case "yesterday":
		return l.AddDate(0, 0, -1).Format(time.DateOnly), true
	}
	for wd := time.Sunday; wd <= time.Saturday; wd++ {
		if s == strings.ToLower(wd.String()) {
			ahead := (int(wd) - int(l.Weekday()) + 7) % 7
			return l.AddDate(0, 0, ahead).Format(time.DateOnly), true
		}
	}
	return "", false
}

// words renders c for a prompt at now in loc, as a person would say it.
func (c *Concern) words(now time.Time, loc *time.Location) string {
	var b strings.Builder
	b.WriteString(c.Summary + " — mentioned " + brain.AgoWords(c.Created, now, loc))
	if d := brain.DayWords(c.On, now, loc); d != "" {
		b.WriteString(", for " + strings.TrimPrefix(d, "on "))
	}
	if n := len(c.Notes); n > 0 {
		b.WriteString("; latest: " + c.Notes[n-1])
	}
	switch {
	case c.CheckInAt.IsZero() && c.Asked.IsZero() && c.On != "" && c.On < now.In(zoneOr(loc)).Format(time.DateOnly):
		b.WriteString("; you have not asked how it went")
	case c.CheckInAt.IsZero():
	case c.CheckInDone && !c.Asked.IsZero():
		b.WriteString("; you asked how it went " + brain.AgoWords(c.Asked, now, loc))
	case c.CheckInDone:
		b.WriteString("; you have asked how it went")
	case c.CheckInAt.After(now):
		b.WriteString("; you mean to ask how it went " + brain.WhenWords(c.CheckInAt, now, loc))
	default:
		b.WriteString("; you meant to ask how it went " + brain.AgoWords(c.CheckInAt, now, loc))
	}
	return b.String()
}

// idsLinePrefix starts the one line of a prompt that holds concern ids.
const idsLinePrefix = "ids for innerlife_concern (touch, close): "

// idsLine is the line that gives the innerlife_concern tool the ids of cs ("" without).
func idsLine(cs []*Concern) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = brain.TruncateRunes(c.Summary, 40) + " = " + c.ID
	}
	return idsLinePrefix + strings.Join(parts, "; ")
}
