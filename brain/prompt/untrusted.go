package prompt

import (
	"strconv"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// Untrusted text in a prompt — what memory, plugins, files and reactions hold, names and
// notes — is escaped, and blocks of it are fenced with <untrusted> tags, so that it stays
// data the model reads, never instructions it follows.

// angles writes < and > as HTML entities.
var angles = strings.NewReplacer("<", "&lt;", ">", "&gt;")

// Escape makes untrusted text safe inside the <untrusted> block: with no < or > left it
// cannot close (or open) the block, in any letter case or spacing. It is idempotent.
func Escape(s string) string { return angles.Replace(s) }

// Quote renders untrusted text — a display name, a reminder's note, a wake's reason — as
// one escaped, double-quoted string: data inside an instruction, which it cannot leave.
func Quote(s string) string { return strconv.Quote(Escape(s)) }

// labelled prefixes a group member's message with the member's name as quoted data:
// "Ann" wrote:\n… — one line, no control characters, at most 64 runes.
func labelled(name, text string) string {
	if name = brain.CleanName(name); name == "" {
		name = "a member"
	}
	return Quote(name) + " wrote:\n" + text
}
