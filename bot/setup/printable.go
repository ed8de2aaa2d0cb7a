package setup

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// printable returns s with every character that could move the cursor, clear the line,
// set the window title or otherwise drive the terminal shown escaped: C0 controls, DEL
// and C1 controls (ESC as \x1b, CR as \r, U+009B as \u009b), bytes that are not UTF-8
// (\xff), and the bidirectional overrides and isolates (\u202e), which can show a line's
// digits in another order. Printable Unicode is kept as it is. Init prints names that
// came from Telegram through it, so a first_name cannot overwrite or forge a line.
//
// It is brain.Printable's contract (issue 24) plus the bidirectional controls; the two
// are to be one.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if escaped(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !escaped(r):
			b.WriteString(s[i : i+n])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// escaped reports whether printable shows r escaped. utf8.RuneError stands for a byte
// that is not UTF-8 (a real U+FFFD is escaped too: it looks the same).
func escaped(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == utf8.RuneError:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional marks, embeddings, overrides and isolates
	}
	return false
}
