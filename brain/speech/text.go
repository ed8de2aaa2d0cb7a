package speech

import (
	"regexp"
	"strings"
)

// The Markdown a reply is written in, as a voice would read it aloud.
var (
	sayImage    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	sayLink     = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	sayAutoLink = regexp.MustCompile(`<(?:https?|mailto):[^>\s]*>`)
	sayURL      = regexp.MustCompile(`\bhttps?://\S+`)
	sayHeading  = regexp.MustCompile(`^#{1,6}\s+`)
	sayBullet   = regexp.MustCompile(`^(?:[-*+•]|\d+[.)])\s+`)
	sayQuote    = regexp.MustCompile(`^(?:>\s?)+`)
	sayRule     = regexp.MustCompile(`^(?:[-*_]\s*){3,}$`)
	sayEdgeMark = regexp.MustCompile(`(^|[\s(])[_*]+|[_*]+($|[\s).,!?;:])`)
	saySpaces   = regexp.MustCompile(`[ \t]+`)
)

// Sayable is text as a voice should say it: Markdown's marks (emphasis, headings,
// bullets, quotes, rules, tables, inline code) left out, a link said as its text, bare
// addresses and code blocks left to the written text, and blank lines collapsed. Nothing
// a voice would read aloud as a symbol ("asterisk") is left.
func Sayable(text string) string {
	var out []string
	fenced := false
	for line := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || sayRule.MatchString(t) {
			continue
		}
		t = sayQuote.ReplaceAllString(t, "")
		t = sayHeading.ReplaceAllString(t, "")
		t = sayBullet.ReplaceAllString(t, "")
		t = sayImage.ReplaceAllString(t, "$1")
		t = sayLink.ReplaceAllString(t, "$1")
		t = sayAutoLink.ReplaceAllString(t, "")
		t = sayURL.ReplaceAllString(t, "")
		t = strings.NewReplacer("**", "", "__", "", "~~", "", "`", "", "|", " ").Replace(t)
		for prev := ""; prev != t; {
			prev, t = t, sayEdgeMark.ReplaceAllString(t, "$1$2")
		}
		t = strings.TrimSpace(saySpaces.ReplaceAllString(t, " "))
		if t == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, t)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
