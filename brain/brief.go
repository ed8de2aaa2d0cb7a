package brain

import (
	"strconv"
	"time"
)

// The situation in plain words: what a prompt's brief and /status say about the person's
// time, their rhythm and the silence, so that the model and the person read the same words
// and never a figure the aggregator computed ("10h37m", "pressure 0.71").

// ClockWords says the local time at now in loc as a person would: "Tuesday evening, 21:10".
func ClockWords(now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	local := now.In(loc)
	return local.Weekday().String() + " " + partOfDay(local.Hour()) + ", " + local.Format("15:04")
}

// RhythmWords says when a person usually writes, from their learned rhythm: "in the
// evening", "in the morning and in the evening", "at any time of day"; "" while the profile
// is not Ready. A part of the day counts when it holds at least half as many active hours
// of the week as the busiest part.
func RhythmWords(r *Rhythm) string {
	if r == nil || !r.Ready() {
		return ""
	}
	parts := [...]string{"morning", "afternoon", "evening", "night"}
	var count [len(parts)]int
	for slot := range hoursPerWeek {
		if r.ActiveAt(slot) {
			count[partIndex(slot%24)]++
		}
	}
	top := 0
	for _, n := range count {
		top = max(top, n)
	}
	if top == 0 {
		return ""
	}
	var out []string
	for i, n := range count {
		if 2*n >= top {
			if parts[i] == "night" {
				out = append(out, "at night")
			} else {
				out = append(out, "in the "+parts[i])
			}
		}
	}
	switch len(out) {
	case 1:
		return out[0]
	case 2:
		return out[0] + " and " + out[1]
	case 3:
		return out[0] + ", " + out[1] + " and " + out[2]
	}
	return "at any time of day"
}

// partIndex is the index in RhythmWords' parts of a local hour's part of the day.
func partIndex(hour int) int {
	switch partOfDay(hour) {
	case "morning":
		return 0
	case "afternoon":
		return 1
	case "evening":
		return 2
	}
	return 3
}

// SilenceWords says when the last exchange at last was, seen at now in loc, and how much
// of the person's waking time has passed since: night is the quiet hours and, once the
// rhythm is Ready, the inferred sleep. "25 minutes ago", "yesterday evening: a few waking
// hours, with the night in between", "on Tuesday: about 3 days" (from 36 hours on, days
// are days), "12 days ago". Never a minute figure: a model told "10h37m" says "it's been
// 10 hours!" to someone who slept through 8 of them. "" when last is zero.
func SilenceWords(last, now time.Time, loc *time.Location, quiet QuietHours, r *Rhythm) string {
	if last.IsZero() {
		return ""
	}
	if loc == nil {
		loc = time.UTC
	}
	when := AgoWords(last, now, loc)
	d := now.Sub(last)
	if d < time.Hour {
		return when // "25 minutes ago" says it all
	}
	if d >= 7*24*time.Hour {
		return when // "12 days ago", "on 2 Jan"
	}
	if d >= 36*time.Hour {
		return when + ": about " + strconv.Itoa(int((d+12*time.Hour)/(24*time.Hour))) + " days"
	}
	awake := NewWaking(quiet, r, loc).Between(last, now)
	night := d - awake
	words := when + ": " + wakingWords(awake)
	switch {
	case night >= 2*time.Hour && night*2 >= d:
		words += ", with the night in between"
	case night >= 2*time.Hour:
		words += ", with part of a night in between"
	}
	return words
}

// wakingWords says a waking span awake (of a silence under 36 hours) coarsely.
func wakingWords(awake time.Duration) string {
	switch {
	case awake < time.Hour:
		return "under an hour"
	case awake < 2*time.Hour:
		return "about an hour"
	case awake < 5*time.Hour:
		return "a few waking hours"
	case awake < 12*time.Hour:
		return "about half a waking day"
	}
	return "about a day"
}

// TimesWords says how many times something happened: "once", "twice", "3 times".
func TimesWords(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}
