package telegram

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// children renders n's children in order: the walk over the Markdown tree that node,
// below, does one node at a time.
func (r *renderer) children(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.node(c)
	}
}

// blockGap is the number of newlines a block wants before it: a blank line between
// blocks, one newline inside tight lists and for a list nested in an item.
func blockGap(n ast.Node) int {
	switch p := n.Parent().(type) {
	case *ast.ListItem:
		if l, ok := p.Parent().(*ast.List); ok && !l.IsTight {
			return 2
		}
		return 1
	case *ast.List:
		if !p.IsTight {
			return 2
		}
		return 1
	}
	return 2
}

func (r *renderer) node(n ast.Node) {
	if n.Type() == ast.TypeBlock && n.PreviousSibling() != nil {
		r.gap(blockGap(n))
	}
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.children(n)
	case *ast.Heading:
		opened := r.openTag("b", "")
		r.children(n)
		if opened {
			r.closeTag("b")
		}
	case *ast.ThematicBreak:
		r.text(thematicBreak, false)
	case *ast.CodeBlock:
		r.pre(n, "")
	case *ast.FencedCodeBlock:
		r.pre(n, codeLanguage(n.Language(r.src)))
	case *ast.HTMLBlock:
		var sb strings.Builder
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			sb.Write(seg.Value(r.src))
		}
		if n.HasClosure() {
			sb.Write(n.ClosureLine.Value(r.src))
		}
		r.text(strings.TrimRight(sb.String(), "\n"), false)
	case *ast.Blockquote:
		r.blockquote(n)
	case *ast.List:
		r.list(n)
	case *east.Table:
		r.table(n)
	case *ast.Text:
		r.markdownText(n.Value(r.src), n.IsRaw())
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.newline()
		}
	case *ast.String:
		r.markdownText(n.Value, n.IsRaw() || n.IsCode())
	case *ast.Emphasis:
		tag := "i"
		if n.Level >= 2 {
			tag = "b"
		}
		r.wrap(n, tag, "")
	case *east.Strikethrough:
		r.wrap(n, "s", "")
	case *ast.CodeSpan:
		var sb strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				v := t.Value(r.src)
				if bytes.HasSuffix(v, []byte("\n")) {
					v = append(v[:len(v)-1:len(v)-1], ' ')
				}
				sb.Write(v)
			}
		}
		opened := r.inLink == 0 && r.openTag("code", "")
		r.text(sb.String(), false)
		if opened {
			r.closeTag("code")
		}
	case *ast.Link:
		r.link(n, string(n.Destination), "")
	case *ast.Image:
		label := "image"
		if n.FirstChild() != nil {
			label = ""
		}
		r.link(n, string(n.Destination), label)
	case *ast.AutoLink:
		dest := string(n.URL(r.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
			dest = "mailto:" + dest
		}
		r.link(n, dest, string(n.Label(r.src)))
	case *ast.RawHTML:
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			r.text(string(seg.Value(r.src)), false)
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			r.text("☑ ", false)
		} else {
			r.text("☐ ", false)
		}
	default:
		// Unknown nodes (future extensions) keep their text.
		r.children(n)
	}
}

func (r *renderer) wrap(n ast.Node, tag, raw string) {
	opened := r.openTag(tag, raw)
	r.children(n)
	if opened {
		r.closeTag(tag)
	}
}

// link renders a link, image or autolink. A non-empty label replaces the node's children.
func (r *renderer) link(n ast.Node, dest, label string) {
	u, safe := safeURL(dest)
	if r.inLink > 0 || !safe {
		r.linkText(n, label)
		return
	}
	r.inLink++
	defer func() { r.inLink-- }()
	if !r.html {
		start := r.b.Len()
		r.linkText(n, label)
		shown := strings.TrimSpace(r.b.String()[start:])
		if shown == "" {
			r.text(u, false)
		} else if shown != u && "mailto:"+shown != u && "http://"+shown != u {
			r.text(" ("+u+")", false)
		}
		return
	}
	r.openTag("a", `<a href="`+html.EscapeString(u)+`">`)
	start := r.b.Len()
	r.linkText(n, label)
	if strings.TrimSpace(r.b.String()[start:]) == "" {
		r.text(u, false)
	}
	r.closeTag("a")
}

func (r *renderer) linkText(n ast.Node, label string) {
	if label != "" {
		r.text(label, false)
		return
	}
	r.inLink++
	r.children(n)
	r.inLink--
}

func (r *renderer) pre(n ast.Node, lang string) {
	var sb strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		sb.Write(seg.Value(r.src))
	}
	code := strings.TrimRight(sb.String(), "\n")
	if strings.TrimSpace(code) == "" {
		return
	}
	r.content()
	r.inPre = true
	if r.html {
		r.b.WriteString("<pre>")
		if lang != "" {
			r.b.WriteString(`<code class="language-` + html.EscapeString(lang) + `">`)
		}
	}
	r.text(code, false)
	if r.html {
		if lang != "" {
			r.b.WriteString("</code>")
		}
		r.b.WriteString("</pre>")
	}
	r.inPre = false
}

func (r *renderer) blockquote(n *ast.Blockquote) {
	if !r.html {
		r.flush()
		saved := r.prefix
		r.prefix += "> "
		r.children(n)
		r.prefix = saved
		return
	}
	if r.quote > 0 {
		// Telegram does not nest blockquotes: the inner quote joins the outer one.
		r.children(n)
		return
	}
	r.content()
	r.quote++
	r.b.WriteString("<blockquote>")
	r.children(n)
	r.b.WriteString("</blockquote>")
	r.quote--
}

func (r *renderer) list(n *ast.List) {
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		if item.PreviousSibling() != nil {
			r.gap(blockGap(item))
		}
		marker := "• "
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d. ", num)
			num++
		}
		r.content()
		r.b.WriteString(marker)
		saved := r.prefix
		r.prefix += strings.Repeat(" ", utf8.RuneCountInString(marker))
		r.children(item)
		r.prefix = saved
	}
}

func (r *renderer) table(n *east.Table) {
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		if row.PreviousSibling() != nil {
			r.gap(1)
		}
		_, header := row.(*east.TableHeader)
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			if cell.PreviousSibling() != nil {
				r.text(" | ", false)
			}
			if header {
				r.wrap(cell, "b", "")
			} else {
				r.children(cell)
			}
		}
	}
}

// codeLanguage keeps the characters of a fence's info string that are safe in a class
// name, e.g. "c++", "objective-c", "c#".
func codeLanguage(info []byte) string {
	var sb strings.Builder
	for _, c := range string(info) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '_', c == '-', c == '+', c == '#', c == '.':
			sb.WriteRune(c)
		}
		if sb.Len() >= 32 {
			break
		}
	}
	return sb.String()
}

// safeURL reports whether dest may become a link (http, https, tg and mailto only) and
// returns it percent-encoded as goldmark would, its scheme in lower case (schemes are
// case-insensitive; "hTtp://" is written "http://").
func safeURL(dest string) (string, bool) {
	u := string(util.URLEscape([]byte(strings.TrimSpace(dest)), true))
	i := strings.IndexByte(u, ':')
	if i <= 0 {
		return "", false
	}
	u = strings.ToLower(u[:i]) + u[i:]
	switch u[:i] {
	case "http", "https":
		p, err := url.Parse(u)
		if err != nil || p.Host == "" {
			return "", false
		}
	case "tg", "mailto":
		if len(u) == i+1 {
			return "", false
		}
	default:
		return "", false
	}
	return u, true
}
