package telegram

import (
	"bufio"
	"bytes"
	"html"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
)

// thematicBreak is what a Markdown "---" becomes.
const thematicBreak = "———"

// markdown parses GitHub-flavoured Markdown: tables, strikethrough, linkify and task lists.
// A goldmark.Markdown is safe for concurrent use once built.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// ToHTML converts Markdown, as a language model writes it, to the HTML subset Telegram
// accepts with parse_mode "HTML". The output uses only the tags b, i, s, code, pre (with
// an optional <code class="language-x"> inside), a (href with an http, https, tg or mailto
// URL) and blockquote; it is always balanced and follows Telegram's nesting rules (no link
// inside a link, nothing inside code, no blockquote inside a blockquote). Everything else,
// including raw HTML in the input, is escaped and shown as text. Headings become bold
// lines, list items "• item" or "1. item" lines indented by depth, tables plain text rows.
func ToHTML(md string) string {
	return render(md, true)
}

// ToPlain renders Markdown with the same layout as ToHTML but as plain text, without tags
// or escaping: the fallback for when Telegram cannot parse the entities of a message.
// Safe link targets follow their text in parentheses.
func ToPlain(md string) string {
	return render(md, false)
}

func render(md string, htmlMode bool) string {
	src := []byte(strings.ToValidUTF8(md, "\uFFFD"))
	doc := markdown.Parser().Parse(text.NewReader(src))
	r := &renderer{src: src, html: htmlMode, lineStart: true, open: map[string]int{}}
	r.children(doc)
	return strings.TrimRightFunc(r.b.String(), isSpace)
}

// renderer walks a goldmark AST and writes Telegram HTML or plain text. Line breaks are
// written lazily: a block asks for "pending" newlines, and they are written (followed by
// the current indentation prefix) only when more content arrives, so output never ends
// in blank lines and closing tags stay next to their text.
type renderer struct {
	src  []byte
	html bool
	b    strings.Builder

	prefix    string // written at the start of every line: list indentation, "> " in plain quotes
	lineStart bool   // the prefix is owed before the next content
	pending   int    // newlines owed before the next content
	started   bool   // some content has been written

	inLink int            // inside <a>: no nested links, no code
	inPre  bool           // inside <pre>: prefix suppressed in HTML mode
	quote  int            // blockquote depth
	open   map[string]int // open inline tags, to avoid <b><b>

	// md and mdw resolve escapes in text nodes (markdownText); kept for the whole render
	// so a message with many text nodes does not allocate a 4 KiB writer for each.
	md  bytes.Buffer
	mdw *bufio.Writer
}

// content prepares for writing visible content: flushes owed newlines and the prefix.
func (r *renderer) content() {
	r.flush()
	r.started = true
	if r.lineStart {
		r.lineStart = false
		if !(r.html && r.inPre) {
			r.b.WriteString(r.prefix)
		}
	}
}

// flush writes the owed newlines, with the current prefix on the blank lines between.
func (r *renderer) flush() {
	if r.started && r.pending > 0 {
		for i := range r.pending {
			if i > 0 {
				r.b.WriteString(strings.TrimRight(r.prefix, " "))
			}
			r.b.WriteByte('\n')
		}
		r.lineStart = true
	}
	r.pending = 0
}

func (r *renderer) newline() {
	if !r.started {
		return
	}
	r.b.WriteByte('\n')
	r.lineStart = true
}

// gap asks for at least n newlines before the next content.
func (r *renderer) gap(n int) {
	r.pending = max(r.pending, n)
}

// text writes s as visible text; escaped is s already HTML-escaped.
func (r *renderer) text(s string, escaped bool) {
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			r.newline()
		}
		if line == "" {
			continue
		}
		r.content()
		switch {
		case r.html && !escaped:
			r.b.WriteString(html.EscapeString(line))
		case !r.html && escaped:
			r.b.WriteString(html.UnescapeString(line))
		default:
			r.b.WriteString(line)
		}
	}
}

// markdownText writes Markdown text, resolving backslash escapes and entity references
// the way goldmark's own HTML renderer does.
func (r *renderer) markdownText(v []byte, raw bool) {
	if !bytes.ContainsAny(v, markdownSpecial) {
		// Nothing to resolve or escape: goldmark's writers would copy v unchanged.
		r.text(string(v), true)
		return
	}
	r.md.Reset()
	if r.mdw == nil {
		r.mdw = bufio.NewWriterSize(&r.md, 512)
	}
	if raw {
		ghtml.DefaultWriter.RawWrite(r.mdw, v)
	} else {
		ghtml.DefaultWriter.Write(r.mdw, v)
	}
	_ = r.mdw.Flush()
	r.text(r.md.String(), true)
}

// markdownSpecial are the bytes goldmark's HTML writers change: backslash escapes, entity
// references, the HTML-special characters and NUL.
const markdownSpecial = "\\&<>\"\x00"

func (r *renderer) openTag(name, raw string) bool {
	if !r.html || r.open[name] > 0 {
		return false
	}
	r.content()
	r.open[name]++
	if raw == "" {
		raw = "<" + name + ">"
	}
	r.b.WriteString(raw)
	return true
}

func (r *renderer) closeTag(name string) {
	r.open[name]--
	r.b.WriteString("</" + name + ">")
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}
