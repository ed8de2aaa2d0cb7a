package prompt

import (
	"strings"

	"github.com/anima-bot/anima/brain"
)

// ledger is the opener ledger in plain words (brain/opener.go): the last messages anima
// wrote first, when, what kind and about what, and whether and when the person answered —
// so that a run that may write first does not repeat itself nor miss that it went
// unanswered. A chat run does not get it: it answers a message, and its turns already
// mark which earlier lines were anima's own initiative.
var ledger = section{name: "ledger", text: (*Builder).ledger}

func (c *Builder) ledger(p *prompt) string {
	all := p.w.Rel.Openers
	if len(all) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Your last openers (messages you wrote first), oldest first:")
	for _, o := range all[max(0, len(all)-brain.RecentOpeners):] {
		b.WriteString("\n- " + brain.OpenedWords(o.At, p.now, p.loc) + ": " + openerWords(o) + " — " + brain.AnsweredWords(o) + ".")
	}
	return b.String()
}

// openerWords says what kind of first message o was and what about: `a check-in about
// "her driving test"`, `missing you, about "the jazz record"`, `a thought`.
func openerWords(o brain.Opener) string {
	words := o.Kind.Words()
	switch {
	case o.Topic == "":
		return words
	case o.Kind == brain.OpenerMissingYou:
		return words + ", about " + Quote(o.Topic)
	}
	return words + " about " + Quote(o.Topic)
}
