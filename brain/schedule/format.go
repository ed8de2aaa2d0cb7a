package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// PageSize is how many items a page of /reminders shows: 20 lines of about 100
// characters stay well inside one Telegram message.
const PageSize = 20

// FormatPage renders page (from 1) of items for /reminders: PageSize items, one line each
// with its id, its next time in loc and how far off it is, the recurring spec, and the note;
// then "… and N more — /reminders P for the next page" when more follow. It returns "You
// have no reminders." for none, and a page past the end says how many pages there are.
func FormatPage(items []brain.ScheduleItem, page int, loc *time.Location, now time.Time) string {
	if len(items) == 0 {
		return "You have no reminders."
	}
	if loc == nil {
		loc = time.UTC
	}
	pages := (len(items) + PageSize - 1) / PageSize
	page = max(page, 1)
	if page > pages {
		return fmt.Sprintf("There are only %d page(s) of reminders; /reminders %d shows the last.", pages, pages)
	}
	from, to := (page-1)*PageSize, min(page*PageSize, len(items))
	var b strings.Builder
	if pages == 1 {
		b.WriteString("Your reminders:")
	} else {
		fmt.Fprintf(&b, "Your reminders (%d–%d of %d):", from+1, to, len(items))
	}
	writeItems(&b, items[from:to], loc, now)
	if rest := len(items) - to; rest > 0 {
		fmt.Fprintf(&b, "\n… and %d more — /reminders %d for the next page", rest, page+1)
	}
	return b.String()
}

// writeItems writes one line per item.
func writeItems(b *strings.Builder, items []brain.ScheduleItem, loc *time.Location, now time.Time) {
	for _, it := range items {
		fmt.Fprintf(b, "\n• %s — %s (%s)", it.ID, localTime(it.Due, loc), Until(now, it.Due))
		if it.Cron != "" {
			fmt.Fprintf(b, ", repeats %s", it.Cron)
			if it.Zone != "" && it.Zone != loc.String() {
				fmt.Fprintf(b, " (%s)", it.Zone)
			}
		}
		if it.Kind == brain.KindFollowup {
			b.WriteString(", my follow-up")
		}
		fmt.Fprintf(b, ": %s", strings.Join(strings.Fields(it.Note), " "))
	}
}

// localTime formats t in loc as "Tue 3 Nov 15:04 CET" (the relative "in 3d" shown next
// to it disambiguates the year).
func localTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2 Jan 15:04 MST")
}

// Until says how far t is from now: "in 2h", "in 3d 4h", "in 45s", "now", "5m ago".
func Until(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d < 0:
		return span(-d) + " ago"
	}
	return "in " + span(d)
}

func span(d time.Duration) string {
	d = d.Round(time.Second)
	days, hours := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	mins, secs := int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%dd %dh", days, hours)
	case days > 0:
		return fmt.Sprintf("%dd", days)
	case hours > 0 && mins > 0:
		return fmt.Sprintf("%dh %dm", hours, mins)
	case hours > 0:
		return fmt.Sprintf("%dh", hours)
	case mins > 0:
		return fmt.Sprintf("%dm", mins)
	}
	return fmt.Sprintf("%ds", secs)
}
