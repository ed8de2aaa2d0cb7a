package telegram

import (
	"bufio"
	"bytes"
	"testing"

	ghtml "github.com/yuin/goldmark/renderer/html"
)

// TestMarkdownTextMatchesGoldmark checks markdownText (with its fast path for text with
// nothing to resolve, and its reused writer) against goldmark's own HTML writers.
func TestMarkdownTextMatchesGoldmark(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
	}{
		{"plain", "how is your day going?"},
		{"unicode", "привет — ça va? 🙂"},
		{"empty", ""},
		{"backslash escape", `not \*bold\* here`},
		{"entity", "fish &amp; chips &#x41; &#66;"},
		{"html specials", `a < b > c "quoted"`},
		{"nul", "a\x00b"},
		{"lone backslash", `C:\path`},
	}
	for _, tc := range tests {
		for _, raw := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				var want bytes.Buffer
				w := bufio.NewWriter(&want)
				if raw {
					ghtml.DefaultWriter.RawWrite(w, []byte(tc.in))
				} else {
					ghtml.DefaultWriter.Write(w, []byte(tc.in))
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				ref := &renderer{html: true, lineStart: true, open: map[string]int{}}
				ref.text(want.String(), true)

				// Twice on one renderer: the reused writer must not carry the first call over.
				got := &renderer{html: true, lineStart: true, open: map[string]int{}}
				got.markdownText([]byte(tc.in), raw)
				first := got.b.String()
				got.markdownText([]byte(tc.in), raw)
				if first != ref.b.String() {
					t.Errorf("raw=%v: markdownText(%q) = %q, want %q", raw, tc.in, first, ref.b.String())
				}
				if got.b.String() != first+first {
					t.Errorf("raw=%v: second call: %q, want %q", raw, got.b.String(), first+first)
				}
			})
		}
	}
}
