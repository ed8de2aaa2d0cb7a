package cognition

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Times in a prompt: each earlier turn starts with when it was written, relative to now
// in the user's zone — "[just now]", "[12 min ago]", "[today 09:05]", "[yesterday 21:14]",
// "[3 days ago]", "[2 Mar]" — so that "yesterday evening" and "a minute ago" differ, at
// two to four tokens a turn.

// turnTagNote tells the model what the marks are (added to the system prompt when there
// are earlier turns).
const turnTagNote = "Earlier messages start with when they were written, in brackets (\"[yesterday 21:14]\"); " +
	"the mark is not part of the message: never write one yourself."

// turnTag is the mark of a turn written at at, seen at now in loc, with a trailing space;
// "" for a zero time.
func turnTag(at, now time.Time, loc *time.Location) string {
	if at.IsZero() {
		return ""
	}
	return "[" + relTime(at, now, loc) + "] "
}

// relTime renders at relative to now, in loc.
func relTime(at, now time.Time, loc *time.Location) string {
	d := now.Sub(at)
	switch {
	case d < 2*time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	}
	local := at.In(loc)
	days := civilDays(local, now.In(loc))
	switch {
	case days == 0:
		return "today " + local.Format("15:04")
	case days == 1:
		return "yesterday " + local.Format("15:04")
	case days < 7:
		return fmt.Sprintf("%d days ago", days)
	case local.Year() == now.In(loc).Year():
		return local.Format("2 Jan")
	}
	return local.Format("2 Jan 2006")
}

// civilDays is the number of calendar days from a's date to b's (each in its own zone).
func civilDays(a, b time.Time) int {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return int(time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC).Sub(time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC)).Hours() / 24)
}

// echoedTag matches a turn mark at the start of an answer: a model imitating the marks of
// the turns it read.
var echoedTag = regexp.MustCompile(`^\[(just now|\d+ min ago|today \d\d:\d\d|yesterday \d\d:\d\d|\d+ days ago|\d{1,2} [A-Z][a-z]{2}( \d{4})?)\]\s*`)

// stripTurnTag removes a turn mark the model copied to the start of its answer.
func stripTurnTag(s string) string {
	if !strings.HasPrefix(s, "[") {
		return s
	}
	return echoedTag.ReplaceAllString(s, "")
}
