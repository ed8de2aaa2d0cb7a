package innerlife

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Status implements plugins.Reporter: user's active concerns in chat and the next
// check-in.
func (p *Plugin) Status(chat, user int64, now time.Time, loc *time.Location) string {
	loc = zoneOr(loc)
	p.mu.Lock()
	defer p.mu.Unlock()
	var active []string
	var next *Concern
	for _, c := range p.concerns[subjectOf(chat, user)] {
		if SalienceAt(c.Touched, now) == Active {
			active = append(active, c.Summary)
		}
		if !c.CheckInAt.IsZero() && !c.CheckInDone && (next == nil || c.CheckInAt.Before(next.CheckInAt)) {
			next = c
		}
	}
	var b strings.Builder
	if len(active) > 0 {
		b.WriteString("Things of yours I'm following: " + strings.Join(active, "; ") + ".")
	}
	if next != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Next check-in: %s, %s (if the moment is right).", next.Summary, next.CheckInAt.In(loc).Format("Mon 2 Jan 15:04"))
	}
	return b.String()
}

// Command implements plugins.Reporter: /thoughts lists the latest journal entries about
// user in chat and their active concerns, without a model call.
func (p *Plugin) Command(chat, user int64, name, _ string, now time.Time, loc *time.Location) (string, bool) {
	if name != "/thoughts" {
		return "", false
	}
	loc = zoneOr(loc)
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	s := subjectOf(chat, user)
	es := p.entries[s]
	if len(es) == 0 {
		b.WriteString("I haven't written anything in my journal about us yet.")
	} else {
		b.WriteString("What I've been thinking lately:")
		for i := len(es) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "\n• %s (%s, %s)", es[i].Text, es[i].Kind, es[i].At.In(loc).Format("Mon 2 Jan 15:04"))
		}
	}
	cs := slices.Clone(p.concerns[s])
	slices.SortStableFunc(cs, func(a, b *Concern) int { return b.Touched.Compare(a.Touched) })
	first := true
	for _, c := range cs {
		if SalienceAt(c.Touched, now) != Active {
			continue
		}
		if first {
			b.WriteString("\n\nThings of yours I'm following:")
			first = false
		}
		b.WriteString("\n• " + c.Summary)
		if !c.CheckInAt.IsZero() && !c.CheckInDone {
			b.WriteString(" — I mean to ask how it went, " + c.CheckInAt.In(loc).Format("Mon 2 Jan 15:04"))
		}
	}
	return b.String(), true
}
