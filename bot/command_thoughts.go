package bot

import (
	"strings"
	"time"

	"github.com/anima-bot/anima/brain/loop"
)

// selfThoughts is what /thoughts adds to the plugins' answer: anima's own note about the
// two of them and the thoughts it kept to share, as the loop holds them (view.Rel). Shown
// for the same reason as the journal: what anima keeps about a person, the person may
// read. "" without either.
func selfThoughts(view loop.CommandView) string {
	rel, loc := view.Rel, view.Loc
	if loc == nil {
		loc = time.UTC
	}
	shares := rel.Shareable(view.Now)
	if rel.Note() == "" && len(shares) == 0 {
		return ""
	}
	var b strings.Builder
	if rel.Note() != "" {
		b.WriteString("\n\nMy own note about us:\n" + rel.Note())
	}
	for i, s := range shares {
		if i == 0 {
			b.WriteString("\n\nThings I might bring up:")
		}
		b.WriteString("\n• " + s.Text + " (until " + s.Expires.In(loc).Format("Mon 2 Jan") + ")")
	}
	return b.String()
}
