package telegram

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var (
	hrefAttr  = regexp.MustCompile(`^<a href="(?:https?|tg|mailto):[^"<>]*">$`)
	classAttr = regexp.MustCompile(`^<code class="language-[A-Za-z0-9_+#.-]+">$`)
	entityRef = regexp.MustCompile(`^&(?:amp|lt|gt|quot|#[0-9]+);`)
)

// checkTelegramHTML reports why s is not HTML Telegram accepts as ToHTML should write
// it: only the allowed tags, balanced, nested as Telegram allows, only known entities.
func checkTelegramHTML(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("invalid UTF-8")
	}
	var stack []string
	in := func(name string) bool {
		for _, t := range stack {
			if t == name {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '>':
			return fmt.Errorf("unescaped > at %d", i)
		case '&':
			m := entityRef.FindString(s[i:])
			if m == "" {
				return fmt.Errorf("bad entity at %d: %.10q", i, s[i:])
			}
			i += len(m)
			continue
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return fmt.Errorf("unterminated tag at %d", i)
			}
			tag := s[i : i+end+1]
			i += end + 1
			if strings.HasPrefix(tag, "</") {
				name := tag[2 : len(tag)-1]
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return fmt.Errorf("unbalanced %s, open %v", tag, stack)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			name, _, _ := strings.Cut(strings.Trim(tag, "<>"), " ")
			switch {
			case in("code") || in("pre") && !(name == "code" && stack[len(stack)-1] == "pre"):
				return fmt.Errorf("%s inside code or pre", tag)
			case name == "a" && !hrefAttr.MatchString(tag):
				return fmt.Errorf("bad link tag %s", tag)
			case name == "a" && in("a"):
				return fmt.Errorf("nested link")
			case name == "code" && in("a"):
				return fmt.Errorf("code inside link")
			case name == "code" && tag != "<code>" && !classAttr.MatchString(tag):
				return fmt.Errorf("bad code tag %s", tag)
			case name == "blockquote" && in("blockquote"):
				return fmt.Errorf("nested blockquote")
			case name == "pre" && (in("a") || in("b") || in("i") || in("s")):
				return fmt.Errorf("pre inside inline tag")
			case tag != "<"+name+">" && name != "a" && name != "code":
				return fmt.Errorf("attributes on %s", tag)
			}
			switch name {
			case "b", "i", "u", "s", "code", "pre", "a", "blockquote":
			default:
				return fmt.Errorf("tag %s not allowed", tag)
			}
			stack = append(stack, name)
			continue
		}
		i++
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %v", stack)
	}
	return nil
}

func FuzzToHTML(f *testing.F) {
	for _, s := range []string{
		"", "**b** *i* `c` [l](https://e.com) <script>", "# h\n\n- a\n  - b\n\n> q\n> > qq",
		"```go\nx\n```", "[`x` **[y](https://a.b)**](https://e.com)", "| a |\n|---|\n| b |",
		"![a *b*](https://e.com)", "&amp; &#0; \\< <a href=\"x\">", "- [x] ~~s~~ www.e.com a@b.co",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := ToHTML(md)
		if err := checkTelegramHTML(out); err != nil {
			t.Fatalf("ToHTML(%q) = %q: %v", md, out, err)
		}
		if out != strings.TrimRightFunc(out, isSpace) {
			t.Fatalf("ToHTML(%q) = %q: trailing whitespace", md, out)
		}
		plain := ToPlain(md)
		if !utf8.ValidString(plain) {
			t.Fatalf("ToPlain(%q) = %q: invalid UTF-8", md, plain)
		}
	})
}

// visible is the text Telegram shows for s, without whitespace, which Split may drop
// at cuts.
func visible(s string, isHTML bool) string {
	var b strings.Builder
	for _, a := range atomize(s, isHTML, 1<<30) {
		b.WriteString(strings.Join(strings.FieldsFunc(a.text, isSpace), ""))
	}
	return b.String()
}

// visibleLen is the length Split counts: UTF-16 code units after entity parsing.
func visibleLen(s string, isHTML bool) int {
	n := 0
	for _, a := range atomize(s, isHTML, 1<<30) {
		n += a.width
	}
	return n
}

// checkSplit checks the properties Split promises.
func checkSplit(t *testing.T, s string, limit int, isHTML bool, parts []string) {
	t.Helper()
	var got strings.Builder
	for i, p := range parts {
		if n := visibleLen(p, isHTML); n > limit {
			t.Fatalf("Split(%q, %d, %v): part %d has length %d: %q", s, limit, isHTML, i, n, p)
		}
		if isBlank(visible(p, isHTML)) {
			t.Fatalf("Split(%q, %d, %v): part %d is blank: %q", s, limit, isHTML, i, p)
		}
		if isHTML {
			if err := checkTelegramHTML(p); err != nil {
				t.Fatalf("Split(%q, %d, %v): part %d %q: %v", s, limit, isHTML, i, p, err)
			}
		}
		got.WriteString(visible(p, isHTML))
	}
	if want := visible(s, isHTML); got.String() != want {
		t.Fatalf("Split(%q, %d, %v) = %q: visible text\n got: %q\nwant: %q", s, limit, isHTML, parts, got.String(), want)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("para one.\n\npara two is longer. It has sentences! Right?", 16)
	f.Add("**bold across the boundary** and `code` then\n\n```\nfenced code block\n```", 20)
	f.Add("👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧🇩🇪🇩🇪 é́́ &<>", 16)
	f.Add("> quote with [a link](https://example.com/path) inside\n> more", 17)
	f.Fuzz(func(t *testing.T, md string, limit int) {
		limit = 16 + abs(limit%200)
		plain := ToPlain(md)
		checkSplit(t, plain, limit, false, Split(plain, limit, false))
		checkSplit(t, md, limit, false, Split(md, limit, false))
		h := ToHTML(md)
		checkSplit(t, h, limit, true, Split(h, limit, true))
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
