package aggregation

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// signalReason builds the reason of a rule-1 wake from its signals.
func signalReason(w *brain.Wake) brain.Reason {
	var msgs, due int
	var note string
	for _, s := range w.Signals {
		switch s.Type {
		case brain.SignalUserMessage:
			msgs++
		case brain.SignalScheduleDue:
			if due == 0 {
				note = s.Text
			}
			due++
		}
	}
	var parts []string
	if msgs > 0 {
		parts = append(parts, w.UserName()+" sent "+plural(msgs, "message", "messages"))
	}
	if due > 0 {
		p := plural(due, "scheduled item", "scheduled items") + " came due"
		if due == 1 && note != "" {
			p = fmt.Sprintf("a scheduled item came due: %q", note)
		}
		parts = append(parts, p)
	}
	text := strings.Join(parts, "; ")
	switch {
	case msgs > 0:
		return brain.Reason{Code: brain.ReasonUserMessage, Text: text}
	default:
		return brain.Reason{Code: brain.ReasonSchedule, Text: text}
	}
}

func thoughtReason(w *brain.Wake) brain.Reason {
	text := "I have a pending thought about this chat"
	if len(w.Signals) > 1 {
		text = fmt.Sprintf("I have %d pending thoughts about this chat", len(w.Signals))
	}
	return brain.Reason{Code: brain.ReasonThought, Text: text}
}

func proactiveReason(rel *brain.Relationship, silence, need time.Duration, p float64, followup bool) brain.Reason {
	if followup {
		return brain.Reason{Code: brain.ReasonFollowup,
			Text: fmt.Sprintf("no answer for %s since my question; time for one follow-up", brain.Duration(silence))}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s since we last talked; pressure %.2f", brain.Duration(silence), p)
	if rel.Status == brain.StatusClosed {
		b.WriteString("; the conversation had closed")
	}
	if n := rel.UnansweredProactive; n > 0 {
		fmt.Fprintf(&b, "; %s unanswered, so I waited at least %s", plural(n, "message", "messages"), brain.Duration(need))
	}
	return brain.Reason{Code: brain.ReasonProactive, Text: b.String()}
}
