package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/anima-bot/anima/brain/cognition"
)

// TestStrictSchema: what strictSchema makes of the schemas MCP servers declare. Each
// result passes the registry's CheckSchema; what cannot be made strict is refused.
func TestStrictSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string // want "" means refused
	}{
		{"empty", `{"type":"object"}`, `{"additionalProperties":false,"properties":{},"required":[],"type":"object"}`},
		{"optional becomes a null union", `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer","default":3}},"required":["q"]}`,
			`{"additionalProperties":false,"properties":{"n":{"type":["integer","null"]},"q":{"type":"string"}},"required":["n","q"],"type":"object"}`},
		{"enum gets null", `{"type":"object","properties":{"u":{"type":"string","enum":["c","f"]}}}`,
			`{"additionalProperties":false,"properties":{"u":{"enum":["c","f",null],"type":["string","null"]}},"required":["u"],"type":"object"}`},
		{"nested object and array", `{"$schema":"x","type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"array","items":{"type":"number"}}},"required":["a"]}},"required":["o"],"additionalProperties":true}`,
			`{"additionalProperties":false,"properties":{"o":{"additionalProperties":false,"properties":{"a":{"items":{"type":"number"},"type":"array"}},"required":["a"],"type":"object"}},"required":["o"],"type":"object"}`},
		{"oneOf becomes anyOf", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"number"}]}},"required":["v"]}`,
			`{"additionalProperties":false,"properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"}]}},"required":["v"],"type":"object"}`},
		{"open map", `{"type":"object","additionalProperties":{"type":"string"}}`, ""},
		{"root not an object", `{"type":"array","items":{"type":"string"}}`, ""},
		{"array without items", `{"type":"object","properties":{"a":{"type":"array"}},"required":["a"]}`, ""},
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/defs/x"}},"required":["a"]}`, ""},
		{"property not a schema", `{"type":"object","properties":{"a":"string"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := strictSchema(json.RawMessage(tc.in))
			if tc.want == "" {
				if !errors.Is(err, errSchema) {
					t.Fatalf("strictSchema = %s, %v; want refused", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("strictSchema: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("strictSchema =\n%s\nwant\n%s", got, tc.want)
			}
			if err := cognition.CheckSchema(got); err != nil {
				t.Errorf("the registry refuses the result: %v", err)
			}
		})
	}
}

// TestStripOptionalNulls: the nulls the model sends for properties the server declared
// optional are dropped before the call; required ones and other values are kept.
func TestStripOptionalNulls(t *testing.T) {
	t.Parallel()
	_, sh, err := strictSchema(json.RawMessage(`{"type":"object","properties":{"q":{"type":["string","null"]},"o":{"type":"string"},` +
		`"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}}}}},"required":["q","list"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(`{"q":null,"o":null,"list":[{"x":null},{"x":"y"}]}`), &args)
	sh.strip(args)
	got, _ := json.Marshal(args)
	if want := `{"list":[{},{"x":"y"}],"q":null}`; string(got) != want {
		t.Errorf("stripped = %s, want %s", got, want)
	}
}

// TestToolName: names are sanitised to the registry's alphabet and 64 bytes.
func TestToolName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"get_forecast": "weather_get_forecast",
		"get.forecast": "weather_get_forecast",
		"ünïcode tool": "weather___n__code_tool",
	} {
		if got := toolName("weather", in); got != want {
			t.Errorf("toolName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := toolName("w", string(make([]byte, 100))); len(got) != 64 {
		t.Errorf("a long name is %d bytes, want 64", len(got))
	}
}

// FuzzStrictSchema: whatever schema a server declares, strictSchema does not panic, and
// what it accepts the registry accepts too.
func FuzzStrictSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"enum":[1,2]}}}}}}`,
		`{"properties":{"x":{"anyOf":[{"type":"string"},{"type":"object"}]}}}`, `{"type":"object","properties":{"a":true}}`, `[]`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		out, sh, err := strictSchema(v)
		if err != nil {
			return
		}
		if err := cognition.CheckSchema(out); err != nil {
			t.Fatalf("strictSchema(%s) = %s, which the registry refuses: %v", in, out, err)
		}
		sh.strip(map[string]any{"a": nil})
	})
}
