package prompt

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Times in a prompt: each earlier turn starts with when it was written, relative to now
// in the user's zone — "[just now]", "[12 min ago]", "[today 09:05]", "[yesterday 21:14]",
// "[3 days ago]", "[2 Mar]" — so that "yesterday evening" and "a minute ago" differ, at
// two to four tokens a turn.

// turnTagNote tells the model what the marks are (added to the system prompt when there
// are earlier turns).
const turnTagNote = "Earlier messages start with when they were written, in brackets (\"[yesterday 21:14]\"); " +
	"the mark is not part of the message: never write one yourself."

// turnFirstNote is turnTagNote for turns among which anima wrote first.
const turnFirstNote = "Earlier messages start with when they were written, in brackets (\"[yesterday 21:14]\"), " +
	"and \"you wrote first\" on those you sent of your own accord, not in answer (\"[yesterday 19:10, you wrote first]\"); " +
	"the mark is not part of the message: never write one yourself."

// turnNote is the note on the marks of turns.
func turnNote(turns []brain.Turn) string {
	for _, t := range turns {
		if wroteFirst(t) {
			return turnFirstNote
		}
	}
	return turnTagNote
}

// wroteFirst reports whether t is a message anima sent of its own accord (a proactive
// message, a follow-up), not in answer.
func wroteFirst(t brain.Turn) bool {
	return t.Role == "assistant" && (t.Kind == brain.KindProactive || t.Kind == brain.KindFollowup)
}

// turnTag is the mark of a turn written at at, seen at now in loc, with a trailing space;
// "" for a zero time. It makes one allocation.
func turnTag(at, now time.Time, loc *time.Location) string {
	if at.IsZero() {
		return ""
	}
	var buf [40]byte
	b := append(buf[:0], '[')
	b = appendRelTime(b, at, now, loc)
	return string(append(b, "] "...))
}

// firstMark ends the mark of a message anima wrote first.
const firstMark = "you wrote first"

// turnMark is the mark of turn t seen at now in loc, with a trailing space: its time
// (turnTag), and "you wrote first" on a message anima sent of its own accord (a proactive
// message, a follow-up), not in answer.
func turnMark(t brain.Turn, now time.Time, loc *time.Location) string {
	if !wroteFirst(t) {
		return turnTag(t.At, now, loc)
	}
	if t.At.IsZero() {
		return "[" + firstMark + "] "
	}
	var buf [64]byte
	b := append(buf[:0], '[')
	b = appendRelTime(b, t.At, now, loc)
	return string(append(b, ", "+firstMark+"] "...))
}

// relTime renders at relative to now, in loc.
func relTime(at, now time.Time, loc *time.Location) string {
	return string(appendRelTime(nil, at, now, loc))
}

// appendRelTime appends at relative to now, in loc, to b.
func appendRelTime(b []byte, at, now time.Time, loc *time.Location) []byte {
	d := now.Sub(at)
	switch {
	case d < 2*time.Minute:
		return append(b, "just now"...)
	case d < time.Hour:
		return append(strconv.AppendInt(b, int64(d/time.Minute), 10), " min ago"...)
	}
	local, today := at.In(loc), now.In(loc)
	days := civilDays(local, today)
	switch {
	case days == 0:
		return local.AppendFormat(append(b, "today "...), "15:04")
	case days == 1:
		return local.AppendFormat(append(b, "yesterday "...), "15:04")
	case days < 7:
		return append(strconv.AppendInt(b, int64(days), 10), " days ago"...)
	case local.Year() == today.Year():
		return local.AppendFormat(b, "2 Jan")
	}
	return local.AppendFormat(b, "2 Jan 2006")
}

// civilDays is the number of calendar days from a's date to b's (each in its own zone).
func civilDays(a, b time.Time) int {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return int(time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC).Sub(time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC)).Hours() / 24)
}

// echoedTag matches a turn mark at the start of an answer: a model imitating the marks of
// the turns it read.
var echoedTag = regexp.MustCompile(`^\[((just now|\d+ min ago|today \d\d:\d\d|yesterday \d\d:\d\d|\d+ days ago|\d{1,2} [A-Z][a-z]{2}( \d{4})?)(, you wrote first)?|you wrote first)\]\s*`)

// StripTurnTag removes a turn mark the model copied to the start of its answer.
func StripTurnTag(s string) string {
	if !strings.HasPrefix(s, "[") {
		return s
	}
	return echoedTag.ReplaceAllString(s, "")
}
