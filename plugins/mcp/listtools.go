package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolName is the longest tool name taken, in bytes (the MCP spec allows 128
// characters); a longer one is refused rather than carried into logs and metric labels.
const maxToolName = 128

// cutMark ends a description cut at limits.description_bytes.
const cutMark = "… [cut]"

// listing is one tools/list of a server, held within its limits.
type listing struct {
	tools   []*mcp.Tool // the first limits.tools the allow-list admits that are not refused
	refused []refusal   // of those first limits.tools, the ones refused for their size
	over    int         // tools the allow-list admits past limits.tools, refused unseen
	// excluded are the first limits.tools names the allow-list does not admit, for
	// `anima mcp list`.
	excluded []string
	stopped  string // why nextCursor was not followed; "" when the listing ended
}

// refusal is a tool of a server that is not offered, and why.
type refusal struct {
	tool string // the server's name for it, cut to maxToolName bytes
	why  string
}

// listTools lists the server's tools page by page within its limits: it follows
// nextCursor for at most limits.list_pages pages and while the listing is under
// limits.list_bytes (as JSON), examines the first limits.tools the allow-list admits,
// refusing one with a name over maxToolName or a schema over limits.schema_bytes, cuts
// descriptions to limits.description_bytes, and keeps a copy of only what adapt needs, so
// that what a listing holds is bounded whatever a page carried.
func (s *server) listTools(ctx context.Context, sess *mcp.ClientSession) (listing, error) {
	lim := s.cfg.Limits
	var out listing
	params := &mcp.ListToolsParams{}
	size := 0
	for page := 1; ; page++ {
		res, err := sess.ListTools(ctx, params)
		if err != nil {
			return listing{}, fmt.Errorf("list tools of %s: %w", s.cfg.Name, err)
		}
		for _, t := range res.Tools {
			raw, err := json.Marshal(t)
			size += len(raw)
			switch {
			case len(s.cfg.Tools) > 0 && !slices.Contains(s.cfg.Tools, t.Name):
				if len(out.excluded) < lim.Tools {
					out.excluded = append(out.excluded, cut(t.Name, maxToolName, ""))
				}
			case len(out.tools)+len(out.refused) >= lim.Tools:
				out.over++
			case err != nil:
				out.refused = append(out.refused, refusal{cut(t.Name, maxToolName, ""), fmt.Sprintf("cannot be read: %v", err)})
			default:
				kept, why := s.keep(t)
				if why != "" {
					out.refused = append(out.refused, refusal{cut(t.Name, maxToolName, ""), why})
					continue
				}
				out.tools = append(out.tools, kept)
			}
		}
		if res.NextCursor == "" {
			return out, nil
		}
		switch {
		case page >= lim.ListPages:
			out.stopped = fmt.Sprintf("more than %d pages (limits.list_pages)", lim.ListPages)
			return out, nil
		case size >= lim.ListBytes:
			out.stopped = fmt.Sprintf("%d bytes in %d pages, past limits.list_bytes (%d)", size, page, lim.ListBytes)
			return out, nil
		}
		params.Cursor = res.NextCursor
	}
}

// keep returns the part of t that adapt needs, with its description cut, or why t is
// refused.
func (s *server) keep(t *mcp.Tool) (*mcp.Tool, string) {
	lim := s.cfg.Limits
	if len(t.Name) > maxToolName {
		return nil, fmt.Sprintf("its name is %d bytes, more than %d", len(t.Name), maxToolName)
	}
	schema, err := json.Marshal(t.InputSchema)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("%v: %v", errSchema, err)
	case len(schema) > lim.SchemaBytes:
		return nil, fmt.Sprintf("its input schema is %d bytes, more than limits.schema_bytes (%d)", len(schema), lim.SchemaBytes)
	}
	kept := &mcp.Tool{Name: t.Name, Description: cut(t.Description, lim.DescriptionBytes, cutMark), InputSchema: json.RawMessage(schema)}
	if a := t.Annotations; a != nil {
		kept.Annotations = &mcp.ToolAnnotations{Title: cut(a.Title, lim.DescriptionBytes, cutMark), ReadOnlyHint: a.ReadOnlyHint}
	}
	return kept, ""
}

// cut returns s if it is at most limit bytes, else its first bytes, cut on a rune
// boundary, and mark, limit bytes in all (mark alone if limit is less than mark).
func cut(s string, limit int, mark string) string {
	if len(s) <= limit {
		return s
	}
	n := max(0, limit-len(mark))
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
