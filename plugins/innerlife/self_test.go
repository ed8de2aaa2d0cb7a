package innerlife

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
)

// TestSelfTools: the dream's self note and share tools check their arguments, say what is
// wrong in words the model can act on, are offered to the dream only, and make the
// relationship's intents.
func TestSelfTools(t *testing.T) {
	t.Parallel()
	cog := cognition.NewRegistry()
	for _, tool := range []brain.Tool{selfNoteTool{}, shareLaterTool{}} {
		if err := cog.Register(tool); err != nil { // strict schema
			t.Fatal(err)
		}
	}
	// (The chat profile is offered every tool; the descriptions say "nightly reflection only".)
	for _, pr := range []brain.Profile{brain.ProfileProactive} {
		for _, tool := range cog.Tools(pr) {
			if n := tool.Spec().Name; strings.HasPrefix(n, "innerlife_s") {
				t.Errorf("profile %s is offered %s, a dream-only tool", pr, n)
			}
		}
	}
	now := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)
	three := []brain.Intent{brain.ShareLater{}, brain.ShareLater{}, brain.ShareLater{}}
	for _, tc := range []struct {
		name    string
		tool    brain.Tool
		args    string
		earlier []brain.Intent
		err     string
		want    brain.Intent
	}{
		{"note", selfNoteTool{}, `{"note":"She calls me  the owl.\n\nI think herons are patient."}`, nil, "",
			brain.SetSelfNote{Chat: 7, Note: "She calls me the owl.\nI think herons are patient."}},
		{"note too long", selfNoteTool{}, `{"note":"` + strings.Repeat("a", 1001) + `"}`, nil, "at most 1000", nil},
		{"empty note", selfNoteTool{}, `{"note":"  "}`, nil, "empty", nil},
		{"unknown field", selfNoteTool{}, `{"note":"x","mood":"y"}`, nil, "invalid arguments", nil},
		{"share", shareLaterTool{}, `{"text":"the heron  I saw","tied_to":"their canal walk","expires_in_days":3}`, nil, "",
			brain.ShareLater{Chat: 7, Share: brain.Share{Text: "the heron I saw", TiedTo: "their canal walk", At: now,
				Expires: now.Add(72 * time.Hour)}}},
		{"expiry 0", shareLaterTool{}, `{"text":"x","tied_to":"y","expires_in_days":0}`, nil, "want 1 to 7", nil},
		{"expiry 8", shareLaterTool{}, `{"text":"x","tied_to":"y","expires_in_days":8}`, nil, "want 1 to 7", nil},
		{"fourth share", shareLaterTool{}, `{"text":"x","tied_to":"y","expires_in_days":2}`, three, "3 thoughts", nil},
		{"long share", shareLaterTool{}, `{"text":"` + strings.Repeat("a", 301) + `","tied_to":"y","expires_in_days":2}`, nil, "at most 300", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := tc.tool.Call(context.Background(), brain.ToolCall{Chat: 7, User: 7, Args: json.RawMessage(tc.args),
				Now: now, Zone: time.UTC, Earlier: tc.earlier})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Intents) != 1 {
				t.Fatalf("intents %+v, want one", res.Intents)
			}
			got := res.Intents[0]
			if s, ok := got.(brain.ShareLater); ok {
				if s.Share.ID == "" {
					t.Error("a share without an id")
				}
				s.Share.ID = ""
				got = s
			}
			if g, w := fmtIntent(got), fmtIntent(tc.want); g != w {
				t.Errorf("intent %s, want %s", g, w)
			}
			if brain.HomeOf(got) != brain.InLoop {
				t.Errorf("%s is not applied by the loop", got.IntentName())
			}
		})
	}
}

func fmtIntent(in brain.Intent) string { b, _ := json.Marshal(in); return in.IntentName() + string(b) }
