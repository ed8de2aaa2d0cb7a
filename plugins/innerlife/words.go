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
// they appear.

// relativeDay matches the words that name a day relative to when they were said.
var relativeDay = regexp.MustCompile(`(?i)\s*\b(today|tonight|tomorrow|yesterday)\b`)

// anchorDay takes the relative day words out of summary, said at now in loc, and returns
// the summary without them and the day they named (YYYY-MM-DD; "" without one), so
// "presentation at work tomorrow" said on Tuesday is "presentation at work", for
// Wednesday — not "tomorrow" for ever after.
func anchorDay(summary string, now time.Time, loc *time.Location) (string, string) {
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
