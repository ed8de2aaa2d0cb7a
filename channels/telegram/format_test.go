package telegram

import "testing"

func TestToHTML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		md   string
		want string
	}{
		{"plain", "hello", "hello"},
		{"bold", "**bold** and __bold__", "<b>bold</b> and <b>bold</b>"},
		{"italic", "*it* and _it_", "<i>it</i> and <i>it</i>"},
		{"bold italic", "***both***", "<i><b>both</b></i>"},
		{"strikethrough", "~~gone~~", "<s>gone</s>"},
		{"code span", "run `a < b && c`", "run <code>a &lt; b &amp;&amp; c</code>"},
		{"code span keeps markdown", "`**x**`", "<code>**x**</code>"},
		{"fenced code with language", "```go\nif a < b {\n}\n```", "<pre><code class=\"language-go\">if a &lt; b {\n}</code></pre>"},
		{"fenced code without language", "```\nx\n```", "<pre>x</pre>"},
		{"fenced code hostile language", "```go\"><b>\nx\n```", "<pre><code class=\"language-gob\">x</code></pre>"},
		{"indented code", "    x := 1", "<pre>x := 1</pre>"},
		{"link", "[site](https://example.com/a?b=1&c=2)", `<a href="https://example.com/a?b=1&amp;c=2">site</a>`},
		{"tg link", "[me](tg://user?id=1)", `<a href="tg://user?id=1">me</a>`},
		{"mailto link", "[mail](mailto:a@b.c)", `<a href="mailto:a@b.c">mail</a>`},
		{"javascript link rejected", "[click](javascript:alert(1))", "click"},
		{"javascript link upper case rejected", "[click](JaVaScRiPt:alert(1))", "click"},
		{"data link rejected", "[x](data:text/html,hi)", "x"},
		{"relative link rejected", "[x](/path)", "x"},
		{"link quote in url", `[x](https://e.com/"onclick)`, `<a href="https://e.com/%22onclick">x</a>`},
		{"link with bold", "[**b**](https://e.com)", `<a href="https://e.com"><b>b</b></a>`},
		{"code in link is text", "[`x`](https://e.com)", `<a href="https://e.com">x</a>`},
		{"empty link text shows url", "[](https://e.com)", `<a href="https://e.com">https://e.com</a>`},
		{"autolink", "<https://e.com>", `<a href="https://e.com">https://e.com</a>`},
		{"linkify", "see www.e.com now", `see <a href="http://www.e.com">www.e.com</a> now`},
		{"email autolink", "<a@b.co>", `<a href="mailto:a@b.co">a@b.co</a>`},
		{"image", "![cat](https://e.com/c.png)", `<a href="https://e.com/c.png">cat</a>`},
		{"image unsafe", "![cat](javascript:x)", "cat"},
		{"image in link", "[![cat](https://e.com/c.png)](https://e.com)", `<a href="https://e.com">cat</a>`},
		{"heading", "# Title\ntext", "<b>Title</b>\n\ntext"},
		{"heading with emphasis", "## A **b**", "<b>A b</b>"},
		{"paragraphs", "one\n\n\n\ntwo", "one\n\ntwo"},
		{"soft break", "one\ntwo", "one\ntwo"},
		{"hard break", "one  \ntwo", "one\ntwo"},
		{"bullet list", "- a\n- b", "• a\n• b"},
		{"ordered list", "3. a\n4. b", "3. a\n4. b"},
		{"nested list", "- a\n  - b\n    - c\n- d", "• a\n  • b\n    • c\n• d"},
		{"ordered nested", "1. a\n   - b\n2. c", "1. a\n   • b\n2. c"},
		{"list item paragraphs", "- a\n\n  more\n- b", "• a\n\n  more\n\n• b"},
		{"task list", "- [x] done\n- [ ] todo", "• ☑ done\n• ☐ todo"},
		{"blockquote", "> quoted **b**\n\nafter", "<blockquote>quoted <b>b</b></blockquote>\n\nafter"},
		{"nested blockquote flattened", "> a\n>\n> > b", "<blockquote>a\n\nb</blockquote>"},
		{"code in blockquote", "> ```\n> x\n> ```", "<blockquote><pre>x</pre></blockquote>"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"raw html inline escaped", "a <script>alert(1)</script> b", "a &lt;script&gt;alert(1)&lt;/script&gt; b"},
		{"raw html block escaped", "<div onclick=\"x\">\nhi\n</div>", "&lt;div onclick=&#34;x&#34;&gt;\nhi\n&lt;/div&gt;"},
		{"telegram tags not passed", "<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"},
		{"special characters", `a & b < c > d "e"`, "a &amp; b &lt; c &gt; d &quot;e&quot;"},
		{"entity references", "&amp; &copy; &#x1F600;", "&amp; © 😀"},
		{"backslash escapes", `\*not\* \<b\>`, "*not* &lt;b&gt;"},
		{"emoji", "hi 👋🏽 **👨‍👩‍👧**", "hi 👋🏽 <b>👨‍👩‍👧</b>"},
		{"non-BMP", "𝕏 `𝄞`", "𝕏 <code>𝄞</code>"},
		{"table", "| a | b |\n|---|---|\n| 1 | **2** |", "<b>a</b> | <b>b</b>\n1 | <b>2</b>"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"trailing whitespace", "a   \n\n\n", "a"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ToHTML(tc.md)
			if got != tc.want {
				t.Errorf("ToHTML(%q)\n got: %q\nwant: %q", tc.md, got, tc.want)
			}
			if err := checkTelegramHTML(got); err != nil {
				t.Errorf("ToHTML(%q) = %q: %v", tc.md, got, err)
			}
		})
	}
}

func TestToPlain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		md   string
		want string
	}{
		{"emphasis", "**b** *i* ~~s~~ `c`", "b i s c"},
		{"no escaping", `a & b < c > "d" <script>`, `a & b < c > "d" <script>`},
		{"link", "[site](https://e.com)", "site (https://e.com)"},
		{"link same as text", "<https://e.com>", "https://e.com"},
		{"unsafe link", "[x](javascript:alert(1))", "x"},
		{"heading", "# Title\ntext", "Title\n\ntext"},
		{"nested list", "- a\n  - b\n1. c", "• a\n  • b\n\n1. c"},
		{"blockquote", "x\n\n> a\n> b\n\ny", "x\n\n> a\n> b\n\ny"},
		{"nested blockquote", "> a\n>\n> > b", "> a\n>\n> > b"},
		{"fenced code", "```py\nprint(1 < 2)\n```", "print(1 < 2)"},
		{"image", "![cat](https://e.com/c.png)", "cat (https://e.com/c.png)"},
		{"entities", "&amp; &lt;", "& <"},
		{"emoji", "👋🏽 **𝕏**", "👋🏽 𝕏"},
		{"thematic break", "a\n\n***\n\nb", "a\n\n———\n\nb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ToPlain(tc.md); got != tc.want {
				t.Errorf("ToPlain(%q)\n got: %q\nwant: %q", tc.md, got, tc.want)
			}
		})
	}
}
