package telegram

import (
	"strings"
	"unicode/utf8"
)

// Split cuts s into parts whose length, as Telegram counts it, is at most limit UTF-16
// code units each, so that every part can be sent as one message (4096 for text, 1024
// for captions).
//
// What is counted: with html false, every UTF-16 code unit of s. With html true, what
// Telegram counts after entity parsing: tags count nothing and an entity such as &lt;
// counts as the character it stands for. The raw HTML of a part is therefore longer than
// limit by its markup, which Telegram does not limit separately.
//
// Split cuts at the last paragraph end ("\n\n") that fits, else the last line break,
// else the last sentence end (". ", "! ", "? "), else the last space, else anywhere
// between characters, never inside a surrogate pair, a combining sequence or emoji
// sequence (as far as it fits the limit), an HTML tag or an entity. Whitespace at a cut
// is dropped (inside <pre> and <code> only line breaks are). With html true, s must be
// Telegram HTML such as ToHTML writes; tags open at a cut are closed at the end of the
// part and reopened, with the same attributes, at the start of the next, so each part is
// balanced on its own.
//
// Parts are in order and none is blank: a part with no visible text but whitespace is
// dropped, so a blank s gives no parts. A limit ≤ 0 means no limit: s is one part.
func Split(s string, limit int, html bool) []string {
	if s == "" {
		return nil
	}
	if limit <= 0 {
		return []string{s}
	}
	// Most replies are short: the raw text is at least as long as what Telegram counts,
	// so when it fits, only blankness needs deciding, without splitting into atoms.
	if utf16Len(s) <= limit && plainVisible(s, html) {
		return []string{s}
	}
	return splitAtoms(s, limit, html)
}

// splitAtoms is Split for a non-empty s and a positive limit, by atoms.
func splitAtoms(s string, limit int, html bool) []string {
	atoms := atomize(s, html, limit)
	total := 0
	content := false
	for _, a := range atoms {
		total += a.width
		content = content || (!a.tag && !a.space)
	}
	if !content {
		return nil
	}
	if total <= limit {
		return []string{s}
	}
	var (
		parts []string
		stack []atom
	)
	for start := 0; start < len(atoms); {
		end := cutAt(atoms, start, limit)
		var part string
		part, stack = renderPart(atoms[start:end], stack)
		if part != "" {
			parts = append(parts, part)
		}
		start = end
	}
	return parts
}

// plainVisible reports whether s surely has visible text: a rune outside any tag that is
// neither whitespace nor the start of an entity. False means "not sure", not "blank".
func plainVisible(s string, isHTML bool) bool {
	for i := 0; i < len(s); {
		if isHTML && s[i] == '<' {
			if a, ok := parseTag(s[i:]); ok {
				i += len(a.raw)
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !(isHTML && r == '&') && !isSpace(r) {
			return true
		}
		i += n
	}
	return false
}

// utf16Len is the length of s in UTF-16 code units, the unit of Telegram's limits.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func isBlank(s string) bool { return strings.TrimFunc(s, isSpace) == "" }

// Cut preferences, best last.
const (
	cutAnywhere = iota
	cutSpace
	cutSentence
	cutLine
	cutParagraph
	numCuts
)

// cutAt returns the end of the part starting at atoms[start]: the best cut that keeps
// the part within limit, always past start.
func cutAt(atoms []atom, start, limit int) int {
	var (
		best         [numCuts]int
		width        int
		seen         bool // a non-space character is in the part
		prev1, prev2 rune // the last two visible runes
	)
	for i := start; i < len(atoms); i++ {
		a := atoms[i]
		if a.tag {
			continue
		}
		if width+a.width > limit {
			if a.space && seen {
				// Whitespace is dropped at a cut: cutting before it is as good as after.
				p1, p2 := prev1, prev2
				for _, r := range a.text {
					p2, p1 = p1, r
				}
				best[cutKind(p1, p2)] = i
			}
			for k := numCuts - 1; k >= 0; k-- {
				if best[k] > start {
					return pastCloseTags(atoms, best[k])
				}
			}
			return i + 1 // a single atom wider than limit
		}
		width += a.width
		seen = seen || !a.space
		for _, r := range a.text {
			prev2, prev1 = prev1, r
		}
		kind := cutAnywhere
		if seen {
			kind = cutKind(prev1, prev2)
		}
		best[kind] = i + 1
	}
	return len(atoms)
}

// cutKind says how good a cut is after the visible runes prev2, prev1.
func cutKind(prev1, prev2 rune) int {
	switch {
	case prev1 == '\n' && prev2 == '\n':
		return cutParagraph
	case prev1 == '\n':
		return cutLine
	case (prev1 == ' ' || prev1 == '\t') && (prev2 == '.' || prev2 == '!' || prev2 == '?' || prev2 == '…'):
		return cutSentence
	case prev1 == '。' || prev1 == '！' || prev1 == '？':
		return cutSentence
	case prev1 == ' ' || prev1 == '\t':
		return cutSpace
	}
	return cutAnywhere
}

// pastCloseTags moves a cut past the closing tags that follow it, so that they end the
// part instead of leaving an empty pair at the start of the next.
func pastCloseTags(atoms []atom, i int) int {
	for i < len(atoms) && atoms[i].tag && atoms[i].close {
		i++
	}
	return i
}

// renderPart writes one part: the tags open before it reopened, its atoms without the
// whitespace at either end, and closing tags for whatever is still open. It returns ""
// for a part without visible non-space text, and the tags open after the part.
func renderPart(atoms []atom, open []atom) (string, []atom) {
	stack := append([]atom(nil), open...)
	trim := make([]bool, len(atoms)) // whitespace that may be dropped at the ends
	first, last := -1, -1
	for i, a := range atoms {
		if a.tag {
			stack = applyTag(stack, a)
			continue
		}
		if a.space {
			trim[i] = !inCode(stack) || strings.Trim(a.text, "\r\n") == ""
		}
		if !a.space {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return "", stack
	}
	var b strings.Builder
	for _, t := range open {
		b.WriteString(t.raw)
	}
	for i, a := range atoms {
		if trim[i] && (i < first || i > last) {
			continue
		}
		b.WriteString(a.raw)
	}
	for i := len(stack) - 1; i >= 0; i-- {
		b.WriteString("</" + stack[i].name + ">")
	}
	return b.String(), stack
}

// applyTag updates the stack of open tags. A closing tag closes the innermost open tag
// of its name; a stray one is ignored.
func applyTag(stack []atom, a atom) []atom {
	switch {
	case a.void:
		return stack
	case !a.close:
		return append(stack, a)
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].name == a.name {
			return append(stack[:i:i], stack[i+1:]...)
		}
	}
	return stack
}

func inCode(stack []atom) bool {
	for _, t := range stack {
		if t.name == "pre" || t.name == "code" {
			return true
		}
	}
	return false
}
