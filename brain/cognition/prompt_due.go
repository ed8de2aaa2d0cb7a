package cognition

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// due is the scheduled items due in this wake: each note, why it was scheduled, and how
// late it is when more than five minutes.
var due = section{name: "due", text: (*Cognition).due}

func (c *Cognition) due(p *prompt) string {
	var b strings.Builder
	for _, s := range p.w.Signals {
		if s.Type != brain.SignalScheduleDue {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "A scheduled item is due: %s.", quote(s.Text))
		if s.Detail != "" {
			fmt.Fprintf(&b, " It was scheduled because: %s.", quote(s.Detail))
		}
		if !s.Due.IsZero() && s.At.Sub(s.Due) > 5*time.Minute {
			fmt.Fprintf(&b, " This is late by %s (it was due %s); acknowledge that if it matters.",
				human(s.At.Sub(s.Due)), s.Due.In(p.loc).Format("Mon 15:04"))
		}
	}
	return b.String()
}
