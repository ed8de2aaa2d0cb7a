package telegram

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// atom is the smallest piece Split moves: a tag, an entity, or a cluster of runes that
// belong together (a character with its combining marks, an emoji sequence).
type atom struct {
	raw   string
	text  string // visible text: the decoded entity or the raw runes; empty for tags
	width int    // UTF-16 code units of text
	space bool   // text is all whitespace

	tag   bool
	name  string // lower-case tag name
	close bool   // </name>
	void  bool   // <name/>
}

func atomize(s string, isHTML bool, limit int) []atom {
	var atoms []atom
	for i := 0; i < len(s); {
		if isHTML && s[i] == '<' {
			if a, ok := parseTag(s[i:]); ok {
				atoms = append(atoms, a)
				i += len(a.raw)
				continue
			}
		}
		if isHTML && s[i] == '&' {
			if n := entityLen(s[i:]); n > 0 {
				raw := s[i : i+n]
				t := html.UnescapeString(raw)
				atoms = append(atoms, atom{raw: raw, text: t, width: utf16Len(t), space: isBlank(t)})
				i += n
				continue
			}
		}
		n := clusterLen(s[i:], isHTML, limit)
		t := s[i : i+n]
		atoms = append(atoms, atom{raw: t, text: t, width: utf16Len(t), space: isBlank(t)})
		i += n
	}
	return atoms
}

// parseTag parses an HTML tag at the start of s: "<name attrs>", "</name>" or "<name/>".
func parseTag(s string) (atom, bool) {
	a := atom{tag: true}
	i := 1
	if i < len(s) && s[i] == '/' {
		a.close = true
		i++
	}
	start := i
	for i < len(s) && (isASCIILetter(s[i]) || (i > start && (s[i] >= '0' && s[i] <= '9' || s[i] == '-'))) {
		i++
	}
	if i == start {
		return atom{}, false
	}
	a.name = strings.ToLower(s[start:i])
	var quote byte
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '<':
			return atom{}, false
		case c == '>':
			a.raw = s[:i+1]
			a.void = !a.close && s[i-1] == '/'
			return a, true
		}
	}
	return atom{}, false
}

// entityLen returns the length of the character reference at the start of s, or 0.
func entityLen(s string) int {
	const maxLen = 32
	i := 1
	if i < len(s) && s[i] == '#' {
		i++
		if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
			i++
		}
	}
	start := i
	for i < len(s) && i < maxLen && (isASCIILetter(s[i]) || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == start || i >= len(s) || s[i] != ';' {
		return 0
	}
	raw := s[:i+1]
	if html.UnescapeString(raw) == raw {
		return 0 // unknown name: plain text
	}
	return i + 1
}

// clusterLen returns the byte length of the rune cluster at the start of s: a rune plus
// combining marks, variation selectors, emoji modifiers and tags, zero-width-joined
// runes, or a pair of regional indicators (a flag). A cluster never grows past limit
// UTF-16 code units, so that it always fits in a part.
func clusterLen(s string, isHTML bool, limit int) int {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 {
		return max(n, 1)
	}
	width := utf16.RuneLen(r)
	regional := isRegional(r)
	joined := false
	for n < len(s) {
		next, m := utf8.DecodeRuneInString(s[n:])
		if next == utf8.RuneError && m <= 1 {
			break
		}
		if isHTML && (next == '<' || next == '&') {
			break
		}
		extend := joined || isExtender(next) || (regional && isRegional(next))
		if !extend || width+utf16.RuneLen(next) > limit {
			break
		}
		joined = next == '\u200d'
		regional = false
		width += utf16.RuneLen(next)
		n += m
	}
	return n
}

func isExtender(r rune) bool {
	return r == '\u200d' ||
		r >= 0xFE00 && r <= 0xFE0F || // variation selectors
		r >= 0x1F3FB && r <= 0x1F3FF || // skin tones
		r >= 0xE0020 && r <= 0xE007F || // emoji tags
		unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
