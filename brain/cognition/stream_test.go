package cognition_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// drafter records the drafts cognition shows; refuse makes every Draft fail.
type drafter struct {
	mu     sync.Mutex
	texts  []string
	chats  []int64
	refuse bool
}

func (d *drafter) Draft(_ context.Context, chat int64, text string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.texts = append(d.texts, text)
	d.chats = append(d.chats, chat)
	if d.refuse {
		return errors.New("drafts refused")
	}
	return nil
}

func (d *drafter) drafts() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.texts)
}

// written is r streamed a few characters at a time, as a model writes.
func written(r openaitest.Reply) openaitest.Reply { r.Chunk = 6; return r }

func draftedWake(d *drafter, texts ...string) brain.Wake {
	w := userWake(texts...)
	w.Drafter = d
	return w
}

// growing reports whether every draft extends the one before (the answer as it is written).
func growing(ds []string) bool {
	for i := 1; i < len(ds); i++ {
		if !strings.HasPrefix(ds[i], ds[i-1]) || ds[i] == ds[i-1] {
			return false
		}
	}
	return true
}

func TestStreamedAnswerIsDrafted(t *testing.T) {
	const text = "Good morning, Sam! The sun is out and so am I."
	tests := []struct {
		name  string
		reply openaitest.Reply
	}{
		{"structured answer", written(openaitest.Answer(text, "awaiting_answer", 0.9))},
		{"prose", written(openaitest.Reply{Content: text})},
		{"fenced structured answer", written(openaitest.Reply{Content: "```json\n{\"response\": \"" + text + "\", \"confidence\": 0.8}\n```"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			e.srv.Enqueue(tc.reply)
			d := &drafter{}
			out := think(t, e, draftedWake(d, "morning!"))

			s := sends(out)
			if len(s) != 1 || s[0].Text != text {
				t.Fatalf("sends = %+v, want the one answer", s)
			}
			ds := d.drafts()
			if len(ds) < 2 || ds[len(ds)-1] != text || !growing(ds) {
				t.Fatalf("drafts = %q, want the answer growing to its whole text", ds)
			}
			for _, dr := range ds {
				if strings.ContainsAny(dr, "{}\"`") {
					t.Errorf("draft %q shows raw JSON or a fence", dr)
				}
			}
			if got := e.srv.Streamed(); got != 1 {
				t.Errorf("streamed requests = %d, want 1", got)
			}
			// The usage chunk is counted like a plain response's usage.
			if got := metric(t, e, "anima_llm_tokens_total", "model", fast, "kind", "completion"); got == 0 {
				t.Error("completion tokens of the stream were not counted")
			}
			if e.c.TokensToday() == 0 {
				t.Error("the stream's tokens did not reach the daily budget")
			}
		})
	}
}

func TestUndraftedWakeIsNotStreamed(t *testing.T) {
	e := newEnv(t, setup{})
	e.srv.Enqueue(openaitest.Answer("hi", "active", 0.9))
	wantSent(t, think(t, e, userWake("hello")), "hi")
	if got := e.srv.Streamed(); got != 0 {
		t.Fatalf("streamed requests = %d, want 0 without a Drafter", got)
	}
}

// TestToolStepsAreNotDrafted: tool calls streamed as deltas (id and name first, then the
// arguments in pieces, keyed by index) are put back together and run; only the final
// answer is drafted.
func TestToolStepsAreNotDrafted(t *testing.T) {
	memo := &memoTool{name: "memo"}
	other := &memoTool{name: "other"}
	e := newEnv(t, setup{tools: []brain.Tool{memo, other}})
	e.srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.Call{
			{Name: "memo", Args: `{"note":"buy oat milk","tag":null}`},
			{Name: "other", Args: `{"note":"call mum on sunday","tag":"family"}`},
		}},
		written(openaitest.Answer("Noted both.", "active", 0.9)),
	)
	d := &drafter{}
	out := think(t, e, draftedWake(d, "remember two things"))

	if diff := cmp.Diff([]string{`{"note":"buy oat milk","tag":null}`}, memo.Calls()); diff != "" {
		t.Errorf("memo calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`{"note":"call mum on sunday","tag":"family"}`}, other.Calls()); diff != "" {
		t.Errorf("other calls (-want +got):\n%s", diff)
	}
	wantSent(t, out, "Noted both.")
	for _, dr := range d.drafts() {
		if !strings.HasPrefix("Noted both.", dr) {
			t.Errorf("draft %q is not part of the final answer", dr)
		}
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || len(toolMessages(reqs[1].Body)) != 2 {
		t.Fatalf("requests = %d, want the tool results sent back in the second", len(reqs))
	}
}

// TestSmartRetryReplacesTheDraft: the low-confidence fast answer is drafted, the draft is
// taken back when the smart model retries, and the smart answer grows in its place; one
// message in the end.
func TestSmartRetryReplacesTheDraft(t *testing.T) {
	e := newEnv(t, setup{})
	e.srv.Enqueue(
		written(openaitest.Answer("Maybe try turning it off and on?", "active", 0.3)).ForModel(fast),
		written(openaitest.Answer("Hold the power button for ten seconds.", "active", 0.9)).ForModel(smart),
	)
	d := &drafter{}
	out := think(t, e, draftedWake(d, "my phone froze"))

	wantSent(t, out, "Hold the power button for ten seconds.")
	ds := d.drafts()
	reset := slices.Index(ds, "")
	if reset < 1 {
		t.Fatalf("drafts = %q, want the fast answer, then a reset, then the smart answer", ds)
	}
	fastDrafts, smartDrafts := ds[:reset], ds[reset+1:]
	if fastDrafts[len(fastDrafts)-1] != "Maybe try turning it off and on?" || !growing(fastDrafts) {
		t.Errorf("fast drafts = %q", fastDrafts)
	}
	if len(smartDrafts) == 0 || smartDrafts[len(smartDrafts)-1] != "Hold the power button for ten seconds." || !growing(smartDrafts) {
		t.Errorf("smart drafts = %q", smartDrafts)
	}
	if got := e.srv.Streamed(); got != 2 {
		t.Errorf("streamed requests = %d, want 2", got)
	}
}

// TestStreamRefusedFallsBack: an endpoint that refuses to stream (400) or ignores the
// request for a stream still answers, once, without an error; streaming then stays off.
func TestStreamRefusedFallsBack(t *testing.T) {
	for _, mode := range []openaitest.StreamMode{openaitest.StreamRefuse, openaitest.StreamIgnore} {
		t.Run(map[openaitest.StreamMode]string{openaitest.StreamRefuse: "400", openaitest.StreamIgnore: "plain JSON"}[mode], func(t *testing.T) {
			e := newEnv(t, setup{})
			e.srv.SetStreaming(mode)
			e.srv.Enqueue(openaitest.Answer("first", "active", 0.9), openaitest.Answer("first again", "active", 0.9),
				openaitest.Answer("second", "active", 0.9))
			d := &drafter{}
			if s := sends(think(t, e, draftedWake(d, "one"))); len(s) != 1 || !strings.HasPrefix(s[0].Text, "first") {
				t.Fatalf("sends = %+v", s)
			}
			if s := sends(think(t, e, draftedWake(d, "two"))); len(s) != 1 {
				t.Fatalf("second sends = %+v", s)
			}
			if got := e.srv.Streamed(); got != 1 {
				t.Errorf("streamed requests = %d, want 1 (the refused one; then streaming stays off)", got)
			}
			if got := metric(t, e, "anima_llm_stream_fallbacks_total"); got != 1 {
				t.Errorf("stream fallbacks = %v, want 1", got)
			}
			if got := metric(t, e, "anima_llm_requests_total", "outcome", "ok"); got != 2 {
				t.Errorf("ok requests = %v, want 2", got)
			}
			if ds := d.drafts(); len(ds) != 0 {
				t.Errorf("drafts = %q, want none", ds)
			}
		})
	}
}

// TestRefusedDraftsStopStreaming: once the Drafter refuses, the run stops drafting and its
// later requests are plain.
func TestRefusedDraftsStopStreaming(t *testing.T) {
	memo := &memoTool{name: "memo"}
	e := newEnv(t, setup{tools: []brain.Tool{memo}})
	e.srv.Enqueue(
		openaitest.Reply{Content: "Let me note that.", ToolCalls: []openaitest.Call{{Name: "memo", Args: `{"note":"x","tag":null}`}}},
		openaitest.Answer("Done.", "active", 0.9),
	)
	d := &drafter{refuse: true}
	wantSent(t, think(t, e, draftedWake(d, "note x")), "Done.")
	if got := len(d.drafts()); got != 1 {
		t.Errorf("drafts tried = %d, want 1 (the refused one)", got)
	}
	if got := e.srv.Streamed(); got != 1 {
		t.Errorf("streamed requests = %d, want 1", got)
	}
}

// TestStreamBadRequestKeepsStreaming: a 4xx on a streamed request that does not say
// streaming is unsupported is that request's failure alone: streaming stays on for the
// next one, and nothing counts as a fallback.
func TestStreamBadRequestKeepsStreaming(t *testing.T) {
	e := newEnv(t, setup{})
	e.srv.SetStreaming(openaitest.StreamSSE)
	e.srv.Enqueue(openaitest.Reply{Status: 400, Message: "This model's maximum context length is 8192 tokens"},
		openaitest.Answer("from the other model", "active", 0.9), openaitest.Answer("second", "active", 0.9))
	d := &drafter{}
	wantSent(t, think(t, e, draftedWake(d, "one")), "from the other model")
	if s := sends(think(t, e, draftedWake(d, "two"))); len(s) != 1 || s[0].Text != "second" {
		t.Fatalf("second sends = %+v", s)
	}
	if got := e.srv.Streamed(); got != 3 {
		t.Errorf("streamed requests = %d, want 3 (streaming stays on after a bad request)", got)
	}
	if got := metric(t, e, "anima_llm_stream_fallbacks_total"); got != 0 {
		t.Errorf("stream fallbacks = %v, want 0", got)
	}
}

// TestProviderErrorBodyNotLogged: a 4xx whose message echoes the user's words is neither
// logged nor returned with them.
func TestProviderErrorBodyNotLogged(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, setup{opts: func(o *cognition.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}})
	e.srv.SetStreaming(openaitest.StreamSSE)
	bad := openaitest.Reply{Status: 400, Message: `Invalid content "my secret diary entry" in messages[1]`}
	e.srv.Enqueue(bad, bad)
	_, err := e.c.Think(context.Background(), draftedWake(&drafter{}, "my secret diary entry"))
	if err == nil {
		t.Fatal("Think succeeded; want the bad request's error")
	}
	for what, s := range map[string]string{"error": err.Error(), "log": logs.String()} {
		if strings.Contains(s, "secret") {
			t.Errorf("%s carries the user's words:\n%s", what, s)
		}
	}
	if !strings.Contains(err.Error(), `llm endpoint answered 400, type server_error: Invalid content "…" in messages[1]`) {
		t.Errorf("error = %v, want the status, type and the redacted message", err)
	}
}
