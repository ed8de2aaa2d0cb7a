package sim

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// This file is the summary's list of first messages: every message anima wrote on its own
// initiative (missing them, a follow-up, a check-in), with the brief its prompt gave the
// model, so that a scenario's two weeks of openers read in a minute. With --live the
// words are the configured model's; with the scripted model they are placeholders and
// only the briefs are anima's.

// opener is one run on anima's own initiative that delivered a message.
type opener struct {
	at    time.Time
	code  string   // the wake's reason code
	texts []string // the messages delivered, in order
	brief string   // the brief section of the run's last prompt ("" if the budget cut it)
}

// openerHeading is an opener's first line: when (the user's local time) and what kind.
func (t *timeline) openerHeading(o opener) string {
	return fmt.Sprintf("%s  %s", o.at.In(t.loc).Format("Mon 02 Jan 15:04"), reasonWord(o.code))
}

// writeOpeners writes the first messages of the run, each under its heading: the brief's
// lines (without its own heading), then what anima wrote. The model's words and the
// quotes in the brief go through brain.Printable: the file is read on a terminal.
func (t *timeline) writeOpeners(w io.Writer) {
	words := "the configured model's words"
	if t.model == "" {
		words = "the scripted model's placeholder words; the briefs are anima's"
	}
	fmt.Fprintf(w, "\nfirst messages: %d, each with the brief its prompt gave the model (%s)\n", len(t.openers), words)
	for _, o := range t.openers {
		fmt.Fprintf(w, "\n%s\n", t.openerHeading(o))
		brief := strings.TrimSpace(strings.TrimPrefix(o.brief, briefHeading))
		if o.brief == "" {
			brief = "(no brief: the prompt's budget cut it)"
		}
		for line := range strings.SplitSeq(brief, "\n") {
			fmt.Fprintf(w, "    %s\n", brain.Printable(strings.TrimSpace(line)))
		}
		for _, text := range o.texts {
			prefix := "  anima: "
			for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
				fmt.Fprintf(w, "%s%s\n", prefix, brain.Printable(strings.TrimRight(line, " \t\r")))
				prefix = "         "
			}
		}
	}
}
