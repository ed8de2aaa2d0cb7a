package brain

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable returns s safe to print to a terminal: every control character (C0 such as
// ESC, BEL, \r, \n and \t; DEL; C1 such as U+009B, the one-byte CSI), every Unicode
// bidirectional override or isolate (which reorder what follows on screen), the line and
// paragraph separators, and every
// byte that is not UTF-8 is written as a visible Go escape (\x1b, \a, \r, \u009b,
// \u202e, \xff), as strconv.Quote would write it; everything else, backslashes and
// quotes included, is left as it is. A name or a description a stranger or a tool server
// chose can then neither move the cursor, retitle the window, clear the screen nor
// overwrite the line it is on.
func Printable(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || unprintable(r) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[0]>>4])
			b.WriteByte(hexDigits[s[0]&0xf])
		case unprintable(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u009b', '\a'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

// unprintable reports whether r is a control character or a bidirectional control.
func unprintable(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators: a new line to some terminals
		return true
	}
	return false
}
