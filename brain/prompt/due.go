package prompt

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// due is the scheduled items due in this wake: each note, why it was scheduled, and how
// late it is when more than five minutes.
var due = section{name: "due", text: (*Builder).due}

func (c *Builder) due(p *prompt) string {
	var b strings.Builder
	for _, s := range p.w.Signals {
		if s.Type != brain.SignalScheduleDue {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "A scheduled item is due: %s.", Quote(s.Text))
		if s.Detail != "" {
			fmt.Fprintf(&b, " It was scheduled because: %s.", Quote(s.Detail))
		}
		if !s.Due.IsZero() && s.At.Sub(s.Due) > 5*time.Minute {
			fmt.Fprintf(&b, " This is late by %s (it was due %s); acknowledge that if it matters.",
				Human(s.At.Sub(s.Due)), s.Due.In(p.loc).Format("Mon 15:04"))
		}
	}
	return b.String()
}
