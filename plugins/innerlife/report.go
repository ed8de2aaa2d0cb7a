package innerlife

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// statusConcerns is how many active concerns the plain /status names.
const statusConcerns = 5

// following returns user's active concerns in chat, the latest touched first, and the
// pending check-in that comes first (p.mu held).
func (p *Plugin) following(chat, user int64, now time.Time) (active []*Concern, next *Concern) {
	for _, c := range p.concerns[subjectOf(chat, user)] {
		if SalienceAt(c.Touched, now) == Active {
			active = append(active, c)
		}
		if !c.CheckInAt.IsZero() && !c.CheckInDone && (next == nil || c.CheckInAt.Before(next.CheckInAt)) {
			next = c
		}
	}
	slices.SortStableFunc(active, func(a, b *Concern) int { return b.Touched.Compare(a.Touched) })
	return active, next
}

// Status implements plugins.Reporter: in plain words, what anima follows of user's in
// chat (the latest touched active concerns) and when it means to ask how the next
// check-in's event went, in words relative to the user's zone.
func (p *Plugin) Status(chat, user int64, now time.Time, loc *time.Location) string {
	loc = zoneOr(loc)
	return p.report(chat, user, now, statusConcerns, "I'm following: ", func(next *Concern) string {
		when := brain.WhenWords(next.CheckInAt, now, loc)
		if when == "now" {
			when = "when the moment is right"
		} else {
			when += ", if the moment is right"
		}
		return fmt.Sprintf("I'd like to ask how it went — %s — %s.", next.Summary, when)
	})
}

// StatusDetails implements plugins.Detailer: /status details lists user's active
// concerns in chat and the next check-in with its date and time.
func (p *Plugin) StatusDetails(chat, user int64, now time.Time, loc *time.Location) string {
	loc = zoneOr(loc)
	return p.report(chat, user, now, math.MaxInt, "Things of yours I'm following: ", func(next *Concern) string {
		return fmt.Sprintf("Next check-in: %s, %s (if the moment is right).", next.Summary, next.CheckInAt.In(loc).Format("Mon 2 Jan 15:04"))
	})
}

// report is a line naming, after lead, user's active concerns in chat (the latest touched
// first, at most most of them and how many more), then a line that says the next check-in.
func (p *Plugin) report(chat, user int64, now time.Time, most int, lead string, says func(next *Concern) string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	active, next := p.following(chat, user, now)
	var b strings.Builder
	if len(active) > 0 {
		names := make([]string, 0, min(len(active), most))
		for _, c := range active[:min(len(active), most)] {
			names = append(names, c.Summary)
		}
		b.WriteString(lead + strings.Join(names, "; "))
		if n := len(active) - most; n > 0 {
			fmt.Fprintf(&b, "; and %d more", n)
		}
		b.WriteString(".")
	}
	if next != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(says(next))
	}
	return b.String()
}

// Command implements plugins.Commander: /thoughts lists the latest journal entries about
// user in chat (those not folded), what anima concluded looking back (its reflections)
// and their active concerns, without a model call.
func (p *Plugin) Command(chat, user int64, name, _ string, now time.Time, loc *time.Location) (string, bool) {
	if name != "/thoughts" {
		return "", false
	}
	loc = zoneOr(loc)
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	s := subjectOf(chat, user)
	es, rs := p.entries[s], p.reflections[s]
	if len(es) == 0 && len(rs) == 0 {
		b.WriteString("I haven't written anything in my journal about us yet.")
	}
	if len(es) > 0 {
		b.WriteString("What I've been thinking lately:")
		for i := len(es) - 1; i >= max(len(es)-thoughtsListed, 0); i-- {
			fmt.Fprintf(&b, "\n• %s (%s, %s)", es[i].Text, es[i].Kind, es[i].At.In(loc).Format("Mon 2 Jan 15:04"))
		}
	}
	if len(rs) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("Looking back:")
		for i := len(rs) - 1; i >= 0; i-- {
			r := rs[i]
			fmt.Fprintf(&b, "\n• %s (%s–%s)", r.Text, r.From.In(loc).Format("2 Jan"), r.To.In(loc).Format("2 Jan"))
		}
	}
	active, _ := p.following(chat, user, now)
	for i, c := range active {
		if i == 0 {
			b.WriteString("\n\nThings of yours I'm following:")
		}
		b.WriteString("\n• " + c.Summary)
		if !c.CheckInAt.IsZero() && !c.CheckInDone {
			b.WriteString(" — I mean to ask how it went, " + c.CheckInAt.In(loc).Format("Mon 2 Jan 15:04"))
		}
	}
	return b.String(), true
}
