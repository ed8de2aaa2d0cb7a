package cognition

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/anima-bot/anima/brain"
)

type fixedTool brain.ToolSpec

func (f fixedTool) Spec() brain.ToolSpec { return brain.ToolSpec(f) }
func (fixedTool) Call(context.Context, brain.ToolCall) (brain.ToolResult, error) {
	return brain.ToolResult{}, nil
}

func defNames(o *offer) (specs, defs, calm []string) {
	for _, s := range o.specs {
		specs = append(specs, s.Name)
	}
	for _, d := range o.defs {
		defs = append(defs, d.Function.Name)
	}
	for _, d := range o.calm {
		calm = append(calm, d.Function.Name)
	}
	return specs, defs, calm
}

// The per-profile offer is cached, and a tool registered after it was first computed is
// offered from then on.
func TestOfferCacheFollowsRegister(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{},"required":[]}`)
	r := NewRegistry()
	first := r.offerFor(brain.ProfileDream, 1000)
	if len(first.specs) != 0 || len(first.defs) != 0 || len(first.calm) != 0 {
		t.Fatalf("dream offer before any dream tool = %+v, want empty", first)
	}
	if r.offerFor(brain.ProfileChat, 1000) != r.offerFor("", 1000) || r.offerFor(brain.ProfileChat, 1000) != r.offerFor(brain.ProfileChat, 1000) {
		t.Error("offer is not cached per profile (\"\" meaning chat)")
	}
	if err := r.Register(fixedTool{Name: "plugin_dream", Parameters: schema, Profiles: []brain.Profile{brain.ProfileDream}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(fixedTool{Name: "plugin_chat", Parameters: schema}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		profile             brain.Profile
		wantSpecs, wantCalm []string
	}{
		{brain.ProfileChat, []string{ToolEscalate, ToolDefer, "plugin_dream", "plugin_chat"}, []string{ToolDefer, "plugin_dream", "plugin_chat"}},
		{brain.ProfileProactive, []string{ToolEscalate, ToolDefer}, []string{ToolDefer}},
		{brain.ProfileDream, []string{"plugin_dream"}, []string{"plugin_dream"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.profile), func(t *testing.T) {
			o := r.offerFor(tc.profile, 1000)
			specs, defs, calm := defNames(o)
			if !slices.Equal(specs, tc.wantSpecs) || !slices.Equal(defs, tc.wantSpecs) || !slices.Equal(calm, tc.wantCalm) {
				t.Errorf("specs %v, defs %v, calm %v; want %v, %v", specs, defs, calm, tc.wantSpecs, tc.wantCalm)
			}
			if o.tokens != specTokens(o.specs) || o.tokens == 0 {
				t.Errorf("tokens = %d, want specTokens = %d", o.tokens, specTokens(o.specs))
			}
			var want []string
			for _, tl := range r.Tools(tc.profile) {
				want = append(want, tl.Spec().Name)
			}
			if !slices.Equal(specs, want) {
				t.Errorf("offer %v disagrees with Tools %v", specs, want)
			}
		})
	}
}
