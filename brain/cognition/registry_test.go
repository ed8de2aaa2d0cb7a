package cognition_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

type specTool brain.ToolSpec

func (s specTool) Spec() brain.ToolSpec { return brain.ToolSpec(s) }
func (specTool) Call(context.Context, brain.ToolCall) (brain.ToolResult, error) {
	return brain.ToolResult{}, nil
}

func TestRegister(t *testing.T) {
	strict := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
	  "when":{"type":["object","null"],"additionalProperties":false,"properties":{"at":{"type":"string"}},"required":["at"]},
	  "tags":{"type":"array","items":{"type":"string"}}},"required":["when","tags"]}`)
	tests := []struct {
		name   string
		spec   brain.ToolSpec
		wantOK bool
	}{
		{"strict", brain.ToolSpec{Name: "plugin_ok", Parameters: strict}, true},
		{"dotted name", brain.ToolSpec{Name: "core.remember", Parameters: strict}, false},
		{"empty name", brain.ToolSpec{Name: "", Parameters: strict}, false},
		{"duplicate", brain.ToolSpec{Name: "core_defer", Parameters: strict}, false},
		{"no schema", brain.ToolSpec{Name: "plugin_a"}, false},
		{"additional properties", brain.ToolSpec{Name: "plugin_b", Parameters: json.RawMessage(
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)}, false},
		{"optional property", brain.ToolSpec{Name: "plugin_c", Parameters: json.RawMessage(
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}},"required":[]}`)}, false},
		{"nested loose", brain.ToolSpec{Name: "plugin_d", Parameters: json.RawMessage(
			`{"type":"object","additionalProperties":false,"properties":{"o":{"type":"object","properties":{}}},"required":["o"]}`)}, false},
		{"array of loose objects", brain.ToolSpec{Name: "plugin_e", Parameters: json.RawMessage(
			`{"type":"object","additionalProperties":false,"properties":{"xs":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"b":{"type":"string"}},"required":[]}}},"required":["xs"]}`)}, false},
		{"root not object", brain.ToolSpec{Name: "plugin_f", Parameters: json.RawMessage(`{"type":"string"}`)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := cognition.NewRegistry().Register(specTool(tc.spec))
			if tc.wantOK != (err == nil) {
				t.Fatalf("Register = %v, want ok %v", err, tc.wantOK)
			}
			if err != nil && !errors.Is(err, cognition.ErrBadTool) {
				t.Errorf("err = %v, want ErrBadTool", err)
			}
			// The registry's check and the fake server's independent one agree.
			if tc.spec.Parameters != nil && tc.spec.Name != "" && tc.spec.Name != "core.remember" && tc.name != "duplicate" {
				if fake := openaitest.CheckSchema(tc.spec.Parameters); (len(fake) == 0) != tc.wantOK {
					t.Errorf("openaitest.CheckSchema = %v, disagrees with Register", fake)
				}
			}
		})
	}
}

func TestCoreToolSchemasAreStrict(t *testing.T) {
	for _, tl := range cognition.NewRegistry().Tools(brain.ProfileChat) {
		if p := openaitest.CheckSchema(tl.Spec().Parameters); len(p) != 0 {
			t.Errorf("%s: %v", tl.Spec().Name, p)
		}
	}
}

// TestSetToolsReplacesGroup: SetTools swaps a group's tools (an MCP server's, as it comes
// and goes) and refuses a bad one or a name another tool holds, keeping the rest.
func TestSetToolsReplacesGroup(t *testing.T) {
	r := cognition.NewRegistry()
	schema := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{},"required":[]}`)
	mk := func(name string) brain.Tool { return groupTool{brain.ToolSpec{Name: name, Parameters: schema}} }
	if errs := r.SetTools("mcp:w", []brain.Tool{mk("w_a"), mk("w_b"), mk("core_defer"), mk("bad name")}); len(errs) != 2 {
		t.Errorf("SetTools refused %d tools (%v), want 2 (the duplicate and the bad name)", len(errs), errs)
	}
	names := func() []string {
		var out []string
		for _, t := range r.Tools(brain.ProfileChat) {
			out = append(out, t.Spec().Name)
		}
		return out
	}
	if got, want := names(), []string{"core_escalate", "core_defer", "w_a", "w_b"}; !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	r.SetTools("mcp:w", []brain.Tool{mk("w_c")})
	if got, want := names(), []string{"core_escalate", "core_defer", "w_c"}; !slices.Equal(got, want) {
		t.Errorf("after the replacement tools = %v, want %v", got, want)
	}
	r.SetTools("mcp:w", nil)
	if got, want := names(), []string{"core_escalate", "core_defer"}; !slices.Equal(got, want) {
		t.Errorf("after the withdrawal tools = %v, want %v", got, want)
	}
}

type groupTool struct{ spec brain.ToolSpec }

func (g groupTool) Spec() brain.ToolSpec { return g.spec }
func (groupTool) Call(context.Context, brain.ToolCall) (brain.ToolResult, error) {
	return brain.ToolResult{}, nil
}
