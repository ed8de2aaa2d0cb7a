package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anima-bot/anima/brain"
)

// tool is one MCP tool offered to the model as a brain.Tool named <server>_<tool>.
type tool struct {
	srv   *server
	name  string // the server's own name for it
	spec  brain.ToolSpec
	shape *shape
}

var _ brain.Tool = (*tool)(nil)

func (t *tool) Spec() brain.ToolSpec { return t.spec }

// adapt turns the listed tools into brain.Tools. A tool whose name collides once
// sanitised, or whose schema cannot be made strict, is refused; the refusals say why.
func (s *server) adapt(listed []*mcp.Tool) ([]brain.Tool, []refusal) {
	var out []brain.Tool
	var refused []refusal
	seen := map[string]string{}
	for _, lt := range listed {
		name := toolName(s.cfg.Name, lt.Name)
		if other, dup := seen[name]; dup {
			refused = append(refused, refusal{lt.Name, fmt.Sprintf("its name collides with another of the server's (%s) as %s", other, name)})
			continue
		}
		params, sh, err := strictSchema(lt.InputSchema)
		if err != nil {
			refused = append(refused, refusal{lt.Name, err.Error()})
			continue
		}
		seen[name] = lt.Name
		desc := strings.TrimSpace(lt.Description)
		if desc == "" && lt.Annotations != nil {
			desc = lt.Annotations.Title
		}
		profiles := append([]brain.Profile{brain.ProfileChat}, s.cfg.Profiles...)
		out = append(out, &tool{srv: s, name: lt.Name, shape: sh, spec: brain.ToolSpec{
			Name: name,
			// The server's words as they are: cognition offers every tool of a SetTools
			// group with its description cut, escaped and fenced as its server's.
			Description: desc,
			Parameters:  params,
			// Only a tool the server marks read-only is free of side effects; the smart
			// retry never repeats the others.
			SideEffects: lt.Annotations == nil || !lt.Annotations.ReadOnlyHint,
			Profiles:    slices.Compact(profiles),
		}})
	}
	return out, refused
}

// toolName is <server>_<tool> as the registry needs it: bytes outside [a-zA-Z0-9_-]
// become '_', and it is cut to 64 bytes.
func toolName(server, name string) string {
	b := []byte(server + "_" + name)
	for i, c := range b {
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 64)])
}

// Call runs the tool on its server. A problem — the server down, a timeout, the server
// dying mid-call, the tool's own error — comes back as an error whose text the model
// reads; the result is capped and fenced as untrusted data.
func (t *tool) Call(ctx context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil || args == nil {
		t.srv.count(t.name, outcomeBadArgs)
		return brain.ToolResult{}, fmt.Errorf("invalid arguments: want one JSON object")
	}
	t.shape.strip(args)
	text, err := t.srv.call(ctx, t.name, args)
	if err != nil {
		return brain.ToolResult{}, err
	}
	return brain.ToolResult{Content: text}, nil
}
