package telegram

import (
	"slices"
	"strings"
	"testing"
)

func TestUTF16Len(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"😀", 2},
		{"👨‍👩‍👧", 8},
		{"𝕏a", 3},
	}
	for _, tc := range tests {
		if got := utf16Len(tc.s); got != tc.want {
			t.Errorf("utf16Len(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		s     string
		limit int
		html  bool
		want  []string
	}{
		{"empty", "", 10, false, nil},
		{"blank", " \n\n ", 1, false, nil},
		{"short", "hello world", 4096, false, []string{"hello world"}},
		{"no limit", strings.Repeat("a", 5000), 0, false, []string{strings.Repeat("a", 5000)}},
		{"exactly limit", "abcd", 4, false, []string{"abcd"}},
		{"paragraphs", "aaaa bbbb.\n\ncccc\ndddd", 16, false, []string{"aaaa bbbb.", "cccc\ndddd"}},
		{"lines before sentences", "aa. bb\ncc. dd ee", 12, false, []string{"aa. bb", "cc. dd ee"}},
		{"sentences", "One two. Three four! Five six? Seven", 22, false, []string{"One two. Three four!", "Five six? Seven"}},
		{"spaces", "alpha beta gamma delta", 12, false, []string{"alpha beta", "gamma delta"}},
		{"no spaces", "abcdefghij", 4, false, []string{"abcd", "efgh", "ij"}},
		{"surrogate pair at boundary", "abc😀def", 4, false, []string{"abc", "😀de", "f"}},
		{"emoji sequence kept whole", "ab👍🏽cd", 5, false, []string{"ab", "👍🏽c", "d"}},
		{"flag kept whole", "a🇩🇪🇫🇷", 5, false, []string{"a🇩🇪", "🇫🇷"}},
		{"combining mark kept", "abce\u0301f", 4, false, []string{"abc", "e\u0301f"}},
		{"html tags not counted", "<b>abcd</b> <i>efgh</i>", 9, true, []string{"<b>abcd</b> <i>efgh</i>"}},
		{"entity counts one", "a &lt; b", 5, true, []string{"a &lt; b"}},
		{"entity not cut", "abc&amp;def", 4, true, []string{"abc&amp;", "def"}},
		{"bold across boundary", "<b>one two three</b>", 8, true, []string{"<b>one two</b>", "<b>three</b>"}},
		{"link reopened with href", `<a href="https://e.com">one two</a> x`, 4, true, []string{`<a href="https://e.com">one</a>`, `<a href="https://e.com">two</a>`, "x"}},
		{"nested tags reopened", "<i>a <b>bc de</b></i>", 4, true, []string{"<i>a <b>bc</b></i>", "<i><b>de</b></i>"}},
		{"close tag stays with its part", "<b>aaaa</b> bbbb", 5, true, []string{"<b>aaaa</b>", "bbbb"}},
		{"pre across boundary", "<pre><code class=\"language-go\">a := 1\nb := 2</code></pre>", 8, true,
			[]string{"<pre><code class=\"language-go\">a := 1</code></pre>", "<pre><code class=\"language-go\">b := 2</code></pre>"}},
		{"pre keeps indentation", "<pre>if x {\n  y()\n}</pre>", 10, true, []string{"<pre>if x {</pre>", "<pre>  y()\n}</pre>"}},
		{"html text mode counts tags", "<b>ab</b>", 4, false, []string{"<b>a", "b</b", ">"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.s, tc.limit, tc.html)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Split(%q, %d, %v)\n got: %q\nwant: %q", tc.s, tc.limit, tc.html, got, tc.want)
			}
			if tc.limit > 0 {
				checkSplit(t, tc.s, tc.limit, tc.html, got)
			}
		})
	}
}

func TestSplitLongTextAtParagraphs(t *testing.T) {
	t.Parallel()
	var paras []string
	for i := 0; len(strings.Join(paras, "\n\n")) < 10000; i++ {
		paras = append(paras, strings.TrimSpace(strings.Repeat("Lorem ipsum dolor sit amet. ", 10+i%7)))
	}
	s := strings.Join(paras, "\n\n")
	parts := Split(s, 4096, false)
	if len(parts) < 3 {
		t.Fatalf("got %d parts, want at least 3", len(parts))
	}
	checkSplit(t, s, 4096, false, parts)
	var rejoined []string
	for i, p := range parts {
		if n := utf16Len(p); n > 4096 {
			t.Errorf("part %d has %d UTF-16 code units", i, n)
		}
		if !strings.HasSuffix(p, ".") {
			t.Errorf("part %d does not end at a paragraph end: ...%q", i, p[len(p)-20:])
		}
		rejoined = append(rejoined, p)
	}
	if got := strings.Join(rejoined, "\n\n"); got != s {
		t.Errorf("parts joined by blank lines differ from the input")
	}
}

func TestSplitHugeParagraphAtSentences(t *testing.T) {
	t.Parallel()
	s := strings.TrimSpace(strings.Repeat("Это предложение с эмодзи 😀 и точкой. ", 400))
	parts := Split(s, 4096, false)
	if len(parts) < 2 {
		t.Fatalf("got %d parts, want several", len(parts))
	}
	checkSplit(t, s, 4096, false, parts)
	for i, p := range parts[:len(parts)-1] {
		if !strings.HasSuffix(p, "точкой.") {
			t.Errorf("part %d does not end at a sentence: ...%q", i, p[len(p)-30:])
		}
	}
}

func TestSplitHTMLFromMarkdown(t *testing.T) {
	t.Parallel()
	var md strings.Builder
	for i := range 60 {
		md.WriteString("Some **bold text that goes on** and `code` & <stuff>.\n\n")
		if i%10 == 0 {
			md.WriteString("```go\n" + strings.Repeat("fmt.Println(\"a < b\")\n", 40) + "```\n\n")
		}
	}
	h := ToHTML(md.String())
	parts := Split(h, 4096, true)
	if len(parts) < 2 {
		t.Fatalf("got %d parts, want several", len(parts))
	}
	checkSplit(t, h, 4096, true, parts)
}

// TestSplitShortFastPath checks that Split's shortcut for text that fits gives what the
// full atom-by-atom split gives.
func TestSplitShortFastPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		s     string
		limit int
		html  bool
	}{
		{"plain", "echo: how is your day going?", 4096, false},
		{"blank", " \n\t ", 4096, false},
		{"html tags only", "<b> </b>", 4096, true},
		{"html entity only", "&nbsp;", 4096, true},
		{"html entity text", "&lt;3", 4096, true},
		{"html bold", "<b>hi</b> there", 4096, true},
		{"stray angle", "a < b", 4096, true},
		{"exactly at limit", "abcd", 4, false},
		{"emoji at limit", "🙂🙂", 4, false},
		{"over limit", "abcde fghij", 5, false},
		{"html over limit raw but not visible", "<b>abcd</b>", 4, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.s, tc.limit, tc.html)
			want := splitAtoms(tc.s, tc.limit, tc.html)
			if !slices.Equal(got, want) {
				t.Errorf("Split(%q, %d, %v) = %q, want %q", tc.s, tc.limit, tc.html, got, want)
			}
		})
	}
}
