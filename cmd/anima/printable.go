package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// printable returns s as a terminal may show it without acting on it: control
// characters (C0 with \n and \t, DEL, C1), bidi overrides and isolates, line and
// paragraph separators, and bytes that are not UTF-8 are written as visible escapes
// (\x1b, \r, \n, \u009b, \u202e, \xff); printable Unicode, emoji with their joiners
// included, is kept. A backslash is kept as it is.
func printable(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if escapeRune(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !escapeRune(r, size):
			b.WriteString(s[i : i+size])
		case r < 0x80:
			if e, ok := shortEscapes[r]; ok {
				b.WriteString(e)
			} else {
				fmt.Fprintf(&b, `\x%02x`, r)
			}
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// shortEscapes are the usual escapes of the C0 controls that have one.
var shortEscapes = map[rune]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`}

// escapeRune reports whether printable escapes the rune r (size bytes long in UTF-8).
func escapeRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1: // not UTF-8
		return true
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}
