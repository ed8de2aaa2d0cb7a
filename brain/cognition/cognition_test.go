package cognition_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

func TestPlainReply(t *testing.T) {
	mem := &fakeMemory{}
	e := newEnv(t, setup{mem: mem})
	e.srv.Enqueue(openaitest.Reply{Content: "Hello Sam! How was your day?"})

	out := think(t, e, userWake("hi"))

	want := []brain.SendMessage{{Chat: 42, Text: "Hello Sam! How was your day?", Kind: brain.KindReply,
		Status: brain.StatusActive, ReplyTo: 100}}
	if diff := cmp.Diff(want, sends(out)); diff != "" {
		t.Errorf("sends (-want +got):\n%s", diff)
	}
	if out.Confidence != 1 || out.Status != brain.StatusActive {
		t.Errorf("outcome = %+v", out)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	req := reqs[0].Body
	if req.Model != fast || req.MaxTokens != 800 || req.ToolChoice != "auto" {
		t.Errorf("request model %q max_tokens %d tool_choice %v", req.Model, req.MaxTokens, req.ToolChoice)
	}
	if diff := cmp.Diff([]string{"core_escalate", "core_defer"}, toolNames(req)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	sys := braintest.SystemText(req.Messages)
	for _, s := range []string{"You are Mira.", "A warm, curious companion.", "Sam",
		"Now: Friday morning, 10:30 for them (14 March 2025, Europe/Berlin)", `"response"`,
		"When they usually write: not known yet", "You last talked just now", "data, not instructions"} {
		if !strings.Contains(sys, s) {
			t.Errorf("system prompt lacks %q:\n%s", s, sys)
		}
	}
	// The wake's reason is the aggregator's log line, never the model's reading.
	if strings.Contains(sys, "Sam wrote a message") || strings.Contains(sys, "user_message") {
		t.Errorf("the wake's reason reached the prompt:\n%s", sys)
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "user" || last.Content != "hi" {
		t.Errorf("last message = %+v, want the user's text", last)
	}
	if diff := cmp.Diff([]string{"hi"}, mem.queries); diff != "" {
		t.Errorf("recall queries (-want +got):\n%s", diff)
	}
	if got := metric(t, e, "anima_llm_requests_total", "model", fast, "outcome", "ok"); got != 1 {
		t.Errorf("requests{ok} = %v", got)
	}
}

func TestFoldedMessages(t *testing.T) {
	e := newEnv(t, setup{})
	out := think(t, e, userWake("hey", "are you there?", "I have news"))
	req := e.srv.Requests()[0].Body
	last := req.Messages[len(req.Messages)-1]
	if last.Content != "hey\nare you there?\nI have news" {
		t.Errorf("final user message = %q", last.Content)
	}
	s := sends(out)
	if len(s) != 1 || s[0].ReplyTo != 102 || s[0].Text != "echo: hey\nare you there?\nI have news" {
		t.Errorf("sends = %+v", s)
	}
}

func TestJSONReply(t *testing.T) {
	tests := []struct {
		name       string
		content    string
		wantText   string // "" = no message
		wantStatus brain.ConversationStatus
		wantConf   float64
	}{
		{"json", `{"response":"Sure!","status":"awaiting_answer","confidence":0.8}`, "Sure!", brain.StatusAwaitingAnswer, 0.8},
		{"fenced", "```json\n{\"response\": \"Fenced\", \"status\": \"closed\", \"confidence\": 0.95}\n```", "Fenced", brain.StatusClosed, 0.95},
		{"whitespace", "  \n{\"response\":\"Inner\",\"status\":\"active\",\"confidence\":0.7}  \n", "Inner", brain.StatusActive, 0.7},
		// JSON inside prose is part of the prose: sent as written, with the default confidence.
		{"prose around an object", "  Here you go:\n {\"response\":\"Inner\",\"status\":\"active\",\"confidence\":0.7}  ",
			"Here you go:\n {\"response\":\"Inner\",\"status\":\"active\",\"confidence\":0.7}", brain.StatusActive, 1},
		{"invalid status", `{"response":"Hm","status":"sleepy","confidence":0.9}`, "Hm", brain.StatusActive, 0.9},
		{"near-miss json", `{'response': 'Single', 'status': 'idle', 'confidence': 0.9,}`, "Single", brain.StatusIdle, 0.9},
		{"empty response says nothing", `{"response":"","status":"idle","confidence":0.9}`, "", brain.StatusIdle, 0.9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			e.srv.Enqueue(openaitest.Reply{Content: tc.content})
			out := think(t, e, userWake("question"))
			s := sends(out)
			switch {
			case tc.wantText == "" && len(s) != 0:
				t.Errorf("sends = %+v, want none", s)
			case tc.wantText != "" && (len(s) != 1 || s[0].Text != tc.wantText || s[0].Status != tc.wantStatus):
				t.Errorf("sends = %+v, want one %q (%s)", s, tc.wantText, tc.wantStatus)
			}
			if out.Status != tc.wantStatus || out.Confidence != tc.wantConf {
				t.Errorf("outcome status %q confidence %v, want %q %v", out.Status, out.Confidence, tc.wantStatus, tc.wantConf)
			}
			if len(e.srv.Requests()) != 1 {
				t.Errorf("requests = %d, want 1 (no smart retry at this confidence)", len(e.srv.Requests()))
			}
		})
	}
}

func TestEscalationCarriesTheWorkSoFar(t *testing.T) {
	memo := &memoTool{name: "test_memo"}
	e := newEnv(t, setup{tools: []brain.Tool{memo}})
	e.srv.Enqueue(
		openaitest.Tool("test_memo", `{"note":"first","tag":null}`).ForModel(fast),
		openaitest.Tool("core_escalate", `{"reason":"this needs care"}`).ForModel(fast),
		openaitest.Answer("A careful answer.", "active", 0.9).ForModel(smart),
	)
	out := think(t, e, userWake("my cat died"))

	if diff := cmp.Diff([]string{fast, fast, smart}, e.srv.Models()); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	s := sends(out)
	if len(s) != 1 || s[0].Text != "A careful answer." {
		t.Fatalf("sends = %+v", s)
	}
	smartReq := e.srv.Requests()[2].Body
	var called []string
	for _, m := range smartReq.Messages {
		for _, tc := range m.ToolCalls {
			called = append(called, tc.Function.Name)
		}
	}
	if diff := cmp.Diff([]string{"test_memo", "core_escalate"}, called); diff != "" {
		t.Errorf("smart request carries tool calls (-want +got):\n%s", diff)
	}
	results := toolMessages(smartReq)
	if len(results) != 2 || !strings.Contains(results[0].Content, `noted {"note":"first","tag":null}`) {
		t.Errorf("smart request tool results = %+v", results)
	}
	if slices.Contains(toolNames(smartReq), "core_escalate") {
		t.Errorf("smart model is offered core_escalate: %v", toolNames(smartReq))
	}
	if got := metric(t, e, "anima_cognition_escalations_total"); got != 1 {
		t.Errorf("escalations = %v, want 1", got)
	}
	if got := metric(t, e, "anima_cognition_smart_retries_total"); got != 0 {
		t.Errorf("smart retries = %v, want 0", got)
	}
}

func TestLowConfidenceRetriedOnSmart(t *testing.T) {
	e := newEnv(t, setup{})
	unsure := openaitest.Answer("Unsure fast answer", "active", 0.3).ForModel(fast)
	unsure.PromptTokens, unsure.CompletionTokens = 100, 10
	sure := openaitest.Answer("Confident smart answer", "awaiting_answer", 0.9).ForModel(smart)
	sure.PromptTokens, sure.CompletionTokens = 200, 20
	e.srv.Enqueue(unsure, sure)
	out := think(t, e, userWake("what should I do?"))
	// The operator's log line per reply (issue 26) names the model that answered and the
	// tokens of the whole turn, the fast run's included.
	if out.Model != smart || out.Tokens != 330 {
		t.Errorf("outcome model %q, tokens %d; want %q and 330 (both runs)", out.Model, out.Tokens, smart)
	}

	s := sends(out)
	if len(s) != 1 || s[0].Text != "Confident smart answer" || s[0].Status != brain.StatusAwaitingAnswer {
		t.Fatalf("sends = %+v, want exactly the smart answer", s)
	}
	reqs := e.srv.Requests()
	if diff := cmp.Diff([]string{fast, smart}, e.srv.Models()); diff != "" {
		t.Fatalf("models (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(reqs[0].Body.Messages, reqs[1].Body.Messages); diff != "" {
		t.Errorf("smart retry does not start from the same messages (-fast +smart):\n%s", diff)
	}
	if got := metric(t, e, "anima_cognition_smart_retries_total"); got != 1 {
		t.Errorf("smart retries = %v, want 1", got)
	}
}

func TestLowConfidenceAfterSideEffectIsNotRetried(t *testing.T) {
	for _, silent := range []bool{false, true} {
		t.Run(fmt.Sprintf("intents=%v", !silent), func(t *testing.T) {
			memo := &memoTool{name: "test_write", effects: true, silent: silent}
			e := newEnv(t, setup{tools: []brain.Tool{memo}})
			e.srv.Enqueue(
				openaitest.Tool("test_write", `{"note":"x","tag":"t"}`),
				openaitest.Answer("Done, I think", "active", 0.2),
			)
			out := think(t, e, userWake("remember x"))

			if diff := cmp.Diff([]string{fast, fast}, e.srv.Models()); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
			wantSent(t, out, "Done, I think")
			if wantIntents := map[bool]int{false: 2, true: 1}[silent]; len(out.Intents) != wantIntents {
				t.Errorf("intents = %+v, want %d", out.Intents, wantIntents)
			}
			if !silent {
				if _, ok := out.Intents[0].(brain.Remember); !ok {
					t.Errorf("first intent = %#v, want the tool's Remember", out.Intents[0])
				}
			}
		})
	}
}

func TestProviderErrors(t *testing.T) {
	tests := []struct {
		name       string
		script     []openaitest.Reply
		wantModels []string
		wantWaits  []time.Duration
		wantClass  string
		wantCount  float64
	}{
		{
			name:       "500s then recovery",
			script:     []openaitest.Reply{openaitest.Fail(500), openaitest.Fail(503)},
			wantModels: []string{fast, fast, fast},
			wantWaits:  []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			wantClass:  "server_error", wantCount: 2,
		},
		{
			name:       "429 honours Retry-After",
			script:     []openaitest.Reply{{Status: 429, Message: "slow down", RetryAfter: "7"}},
			wantModels: []string{fast, fast},
			wantWaits:  []time.Duration{7 * time.Second},
			wantClass:  "rate_limited", wantCount: 1,
		},
		{
			name:       "non-JSON 502 body",
			script:     []openaitest.Reply{{Status: 502, Body: "<html><h1>502 Bad Gateway</h1></html>"}},
			wantModels: []string{fast, fast},
			wantWaits:  []time.Duration{100 * time.Millisecond},
			wantClass:  "server_error", wantCount: 1,
		},
		{
			name:       "400 is not retried, the other model answers",
			script:     []openaitest.Reply{openaitest.Fail(400).ForModel(fast)},
			wantModels: []string{fast, smart},
			wantClass:  "error", wantCount: 1,
		},
		{
			name:       "fast keeps failing, smart answers",
			script:     []openaitest.Reply{openaitest.Fail(500), openaitest.Fail(500), openaitest.Fail(500)},
			wantModels: []string{fast, fast, fast, smart},
			wantWaits:  []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			wantClass:  "server_error", wantCount: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			e.srv.Enqueue(tc.script...)
			out := think(t, e, userWake("hello"))
			wantSent(t, out, "echo: hello")
			if diff := cmp.Diff(tc.wantModels, e.srv.Models()); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWaits, e.sleep.All()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if got := metric(t, e, "anima_llm_requests_total", "model", fast, "outcome", tc.wantClass); got != tc.wantCount {
				t.Errorf("requests{%s,%s} = %v, want %v", fast, tc.wantClass, got, tc.wantCount)
			}
		})
	}
}

func TestRequestTimeoutIsRetried(t *testing.T) {
	e := newEnv(t, setup{cfg: func(c *cognition.Config) { c.RequestTimeout = 300 * time.Millisecond }})
	e.srv.Enqueue(openaitest.Reply{Hang: true})
	out := think(t, e, userWake("hello"))
	if s := sends(out); len(s) != 1 {
		t.Errorf("sends = %+v", s)
	}
	if got := metric(t, e, "anima_llm_requests_total", "model", fast, "outcome", "timeout"); got != 1 {
		t.Errorf("requests{timeout} = %v, want 1", got)
	}
}

func TestTotalFailureReturnsError(t *testing.T) {
	e := newEnv(t, setup{})
	e.srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(500) })
	out, err := e.c.Think(context.Background(), userWake("hello"))
	if err == nil {
		t.Fatalf("Think = %+v, want an error", out)
	}
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Errorf("err = %v, want it to wrap the provider's 500", err)
	}
	if diff := cmp.Diff([]string{fast, fast, fast, smart, smart, smart}, e.srv.Models()); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if got := metric(t, e, "anima_cognition_runs_total", "profile", "chat", "outcome", "error"); got != 1 {
		t.Errorf("runs{error} = %v", got)
	}
}

func TestCircuitBreaker(t *testing.T) {
	e := newEnv(t, setup{opts: func(o *cognition.Options) {
		o.Retries = -1
		o.BreakerThreshold = 3
		o.BreakerCooldown = 30 * time.Second
	}})
	e.srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(503) })
	ctx := context.Background()

	if _, err := e.c.Think(ctx, userWake("one")); err == nil || errors.Is(err, cognition.ErrUnavailable) {
		t.Fatalf("first Think err = %v, want a provider error", err)
	}
	if _, err := e.c.Think(ctx, userWake("two")); !errors.Is(err, cognition.ErrUnavailable) {
		t.Fatalf("second Think err = %v, want ErrUnavailable once the breaker opens", err)
	}
	if got := metric(t, e, "anima_cognition_breaker_open"); got != 1 {
		t.Errorf("breaker gauge = %v, want 1", got)
	}
	n := len(e.srv.Requests())
	if _, err := e.c.Think(ctx, userWake("three")); !errors.Is(err, cognition.ErrUnavailable) {
		t.Fatalf("third Think err = %v, want ErrUnavailable", err)
	}
	if len(e.srv.Requests()) != n {
		t.Errorf("an open breaker still sent %d requests", len(e.srv.Requests())-n)
	}

	e.clock.Advance(31 * time.Second)
	e.srv.SetDefault(nil) // the endpoint is back
	out := think(t, e, userWake("four"))
	if s := sends(out); len(s) != 1 {
		t.Errorf("sends = %+v", s)
	}
	if got := metric(t, e, "anima_cognition_breaker_open"); got != 0 {
		t.Errorf("breaker gauge = %v after a good probe, want 0", got)
	}
}

func TestHalfOpenProbeFailureReopens(t *testing.T) {
	e := newEnv(t, setup{opts: func(o *cognition.Options) {
		o.Retries = -1
		o.BreakerThreshold = 2
	}})
	e.srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(500) })
	ctx := context.Background()
	_, _ = e.c.Think(ctx, userWake("one")) // fast + smart fail: open
	e.clock.Advance(31 * time.Second)
	n := len(e.srv.Requests())
	if _, err := e.c.Think(ctx, userWake("probe")); !errors.Is(err, cognition.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable after the failed probe", err)
	}
	if got := len(e.srv.Requests()) - n; got != 1 {
		t.Errorf("half-open sent %d requests, want exactly one probe", got)
	}
}

func TestUnknownTool(t *testing.T) {
	e := newEnv(t, setup{})
	e.srv.Enqueue(openaitest.Tool("web_search", `{"q":"x"}`), openaitest.Answer("ok", "active", 0.9))
	out := think(t, e, userWake("search"))
	if s := sends(out); len(s) != 1 {
		t.Errorf("sends = %+v", s)
	}
	res := toolMessages(e.srv.Requests()[1].Body)
	if len(res) != 1 || !strings.Contains(res[0].Content, `no tool named "web_search"`) {
		t.Errorf("tool results = %+v", res)
	}
	if got := metric(t, e, "anima_cognition_tool_calls_total", "tool", "unknown", "outcome", "unknown"); got != 1 {
		t.Errorf("tool_calls{unknown} = %v", got)
	}
}

// A tool name the model made up outside ^[a-zA-Z0-9_-]+$ ("core.escalate", "") is an
// unknown tool like any other; echoing it back verbatim in the assistant message would
// make the endpoint reject every further request of the run.
func TestOddToolNameIsAnErrorResult(t *testing.T) {
	for _, name := range []string{"core.escalate", "", "functions/core_remember x"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, setup{})
			e.srv.Enqueue(openaitest.Tool(name, `{}`), openaitest.Answer("ok", "active", 0.9))
			out := think(t, e, userWake("hi"))
			wantSent(t, out, "ok")
			reqs := e.srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("requests = %d, want 2", len(reqs))
			}
			if res := toolMessages(reqs[1].Body); len(res) != 1 || !strings.Contains(res[0].Content, "no tool named") {
				t.Errorf("tool results = %+v", res)
			}
		})
	}
}

func TestMalformedArguments(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantCalls []string
		wantMsg   string
	}{
		{"trailing comma and single quotes", `{'note': 'milk', 'tag': None,}`, []string{`{"note":"milk","tag":null}`}, "noted"},
		{"code fence and missing brace", "```json\n{\"note\": \"eggs\", \"tag\": null\n```", []string{`{"note":"eggs","tag":null}`}, "noted"},
		{"unrepairable", `note = milk`, nil, "not a valid JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			memo := &memoTool{name: "test_memo"}
			e := newEnv(t, setup{tools: []brain.Tool{memo}})
			e.srv.Enqueue(openaitest.Tool("test_memo", tc.args), openaitest.Answer("ok", "active", 0.9))
			think(t, e, userWake("note it"))
			if diff := cmp.Diff(tc.wantCalls, memo.Calls()); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			res := toolMessages(e.srv.Requests()[1].Body)
			if len(res) != 1 || !strings.Contains(res[0].Content, tc.wantMsg) {
				t.Errorf("tool results = %+v, want %q", res, tc.wantMsg)
			}
		})
	}
}

// toolsThenAnswer calls a tool while tools are offered and answers once they are not.
func toolsThenAnswer(args func(i int) string) openaitest.Responder {
	i := 0
	return func(req openai.ChatCompletionRequest) openaitest.Reply {
		if len(req.Tools) == 0 {
			return openaitest.Answer("final", "active", 0.9)
		}
		i++
		return openaitest.Tool("test_memo", args(i))
	}
}

func TestThirdIdenticalCallForcesAnswer(t *testing.T) {
	memo := &memoTool{name: "test_memo"}
	e := newEnv(t, setup{tools: []brain.Tool{memo}})
	e.srv.SetDefault(toolsThenAnswer(func(int) string { return `{"note":"same","tag":null}` }))
	out := think(t, e, userWake("loop"))

	if n := len(memo.Calls()); n != 2 {
		t.Errorf("tool ran %d times, want 2", n)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 3 with tools and 1 forced", len(reqs))
	}
	final := reqs[3].Body
	if len(final.Tools) != 0 || final.ToolChoice != nil {
		t.Errorf("forced request still offers tools: %v", toolNames(final))
	}
	if note := final.Messages[len(final.Messages)-1]; note.Role != "system" || !strings.Contains(note.Content, "repeated") {
		t.Errorf("forced request's last message = %+v", note)
	}
	wantSent(t, out, "final")
}

func TestToolBudgetForcesAnswer(t *testing.T) {
	tests := []struct {
		name  string
		wake  brain.Wake
		calls int
	}{
		{"chat budget", userWake("go"), 3},
		{"proactive budget", proactiveWake(), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			memo := &memoTool{name: "test_memo", profiles: []brain.Profile{brain.ProfileChat, brain.ProfileProactive}}
			e := newEnv(t, setup{tools: []brain.Tool{memo}, cfg: func(c *cognition.Config) {
				c.MaxToolCalls, c.ProactiveToolCalls = 3, 2
			}})
			e.srv.SetDefault(toolsThenAnswer(func(i int) string { return `{"note":"n` + string(rune('0'+i)) + `","tag":null}` }))
			out := think(t, e, tc.wake)
			if n := len(memo.Calls()); n != tc.calls {
				t.Errorf("tool ran %d times, want %d", n, tc.calls)
			}
			reqs := e.srv.Requests()
			final := reqs[len(reqs)-1].Body
			if len(final.Tools) != 0 || !strings.Contains(final.Messages[len(final.Messages)-1].Content, "budget") {
				t.Errorf("last request is not a forced answer: tools %v", toolNames(final))
			}
			if s := sends(out); len(s) != 1 {
				t.Errorf("sends = %+v", s)
			}
		})
	}
}

func TestIterationBudgetForcesAnswer(t *testing.T) {
	memo := &memoTool{name: "test_memo"}
	e := newEnv(t, setup{tools: []brain.Tool{memo}, cfg: func(c *cognition.Config) { c.MaxIterations = 3 }})
	e.srv.SetDefault(toolsThenAnswer(func(i int) string { return `{"note":"n` + string(rune('0'+i)) + `","tag":null}` }))
	think(t, e, userWake("go"))
	if n := len(e.srv.Requests()); n != 4 {
		t.Errorf("requests = %d, want 3 + 1 forced", n)
	}
}

// The run's deadline is a budget like the others: when too little of it is left for
// another full request, the final answer is forced rather than the run failing (which
// would drop the work and its intents, and leave the user with only an apology).
func TestDeadlineForcesAnswer(t *testing.T) {
	memo := &memoTool{name: "test_memo", effects: true}
	e := newEnv(t, setup{tools: []brain.Tool{memo}, cfg: func(c *cognition.Config) { c.RequestTimeout = 500 * time.Millisecond }})
	tools := toolsThenAnswer(func(i int) string { return `{"note":"n` + string(rune('0'+i)) + `","tag":null}` })
	e.srv.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		r := tools(req)
		if len(r.ToolCalls) > 0 {
			r.Delay = 350 * time.Millisecond // slow but within the request timeout
		}
		return r
	})
	out, err := e.c.Think(context.Background(), userWake("go"))
	if err != nil {
		t.Fatalf("Think: %v, want a forced final answer", err)
	}
	wantSent(t, out, "final")
	if n := len(memo.Calls()); len(out.Intents) != n+1 {
		t.Errorf("intents = %d, want the %d tool intents and the answer", len(out.Intents), n)
	}
	reqs := e.srv.Requests()
	if final := reqs[len(reqs)-1].Body; len(final.Tools) != 0 || !strings.Contains(final.Messages[len(final.Messages)-1].Content, "time") {
		t.Errorf("last request is not a forced answer: tools %v", toolNames(final))
	}
}

func TestProfiles(t *testing.T) {
	remember := &memoTool{name: "core_remember", effects: true, profiles: []brain.Profile{brain.ProfileChat, brain.ProfileDream}}
	schedule := &memoTool{name: "core_schedule", effects: true, profiles: []brain.Profile{brain.ProfileChat, brain.ProfileProactive}}
	search := &memoTool{name: "core_memory_search", profiles: []brain.Profile{brain.ProfileChat, brain.ProfileDream}}
	tests := []struct {
		name string
		wake brain.Wake
		want []string
		kind brain.MessageKind
	}{
		{"chat", userWake("hi"), []string{"core_escalate", "core_defer", "core_remember", "core_schedule", "core_memory_search"}, brain.KindReply},
		{"proactive", proactiveWake(), []string{"core_escalate", "core_defer", "core_schedule"}, brain.KindProactive},
		{"dream", func() brain.Wake {
			w := proactiveWake()
			w.Profile = brain.ProfileDream
			w.Reason = brain.Reason{Code: brain.ReasonThought, Text: "night-time reflection"}
			return w
		}(), []string{"core_remember", "core_memory_search"}, brain.KindProactive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{tools: []brain.Tool{remember, schedule, search}})
			e.srv.Enqueue(openaitest.Answer("Thinking of you", "awaiting_answer", 0.9))
			out := think(t, e, tc.wake)
			req := e.srv.Requests()[0].Body
			if diff := cmp.Diff(tc.want, toolNames(req)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if s := sends(out); len(s) != 1 || s[0].Kind != tc.kind {
				t.Errorf("sends = %+v, want kind %s", s, tc.kind)
			}
		})
	}
}

func TestProactiveWakeHasNoUserMessage(t *testing.T) {
	e := newEnv(t, setup{cfg: func(c *cognition.Config) { c.QuietHours = brain.DefaultProactivePolicy().QuietHours }})
	e.srv.Enqueue(openaitest.Answer("", "idle", 0.9))
	out := think(t, e, proactiveWake())
	if len(out.Intents) != 0 {
		t.Errorf("intents = %+v, want none (the model chose silence)", out.Intents)
	}
	req := e.srv.Requests()[0].Body
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "system" || !strings.Contains(last.Content, "It has been quiet between you, and you may write first") ||
		strings.Contains(last.Content, "it has been quiet for a while") {
		t.Errorf("last message = %+v, want the ask in words, not the wake's reason", last)
	}
	// Sam last wrote at 14:30 yesterday, Berlin time; the default quiet hours (22:30–08:30)
	// are the night in between.
	if sys := braintest.SystemText(req.Messages); !strings.Contains(sys, "You last talked yesterday afternoon: about half a waking day, with the night in between.") {
		t.Errorf("system prompt lacks the silence in waking time:\n%s", sys)
	}
}

func TestDeferTool(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantDefer bool
		wantMsg   string
	}{
		{"two hours", `{"hours":2,"reason":"in a meeting"}`, true, "Deferred"},
		{"too long", `{"hours":30,"reason":"x"}`, false, "at most 24"},
		{"zero", `{"hours":0,"reason":"x"}`, false, "greater than 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			e.srv.Enqueue(openaitest.Tool("core_defer", tc.args), openaitest.Answer("", "idle", 0.9))
			out := think(t, e, proactiveWake())
			var got []brain.Intent
			for _, in := range out.Intents {
				if d, ok := in.(brain.Defer); ok {
					got = append(got, d)
				}
			}
			if tc.wantDefer {
				want := []brain.Intent{brain.Defer{Chat: 42, Until: t0.Add(2 * time.Hour), Reason: "in a meeting"}}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("defer intents (-want +got):\n%s", diff)
				}
			} else if len(got) != 0 {
				t.Errorf("defer intents = %+v, want none", got)
			}
			res := toolMessages(e.srv.Requests()[1].Body)
			if len(res) != 1 || !strings.Contains(res[0].Content, tc.wantMsg) {
				t.Errorf("tool result = %+v, want %q", res, tc.wantMsg)
			}
		})
	}
}

func TestScheduleDue(t *testing.T) {
	tests := []struct {
		name     string
		sig      brain.Signal
		wantKind brain.MessageKind
		want     []string
		dontWant []string
	}{
		{"followup on time", brain.Signal{Text: "ask how the exam went", Detail: "Sam has an exam on Friday",
			Kind: brain.KindFollowup, Due: t0.Add(-time.Minute)}, brain.KindFollowup,
			[]string{`"ask how the exam went"`, `"Sam has an exam on Friday"`}, []string{"late by"}},
		{"late reminder", brain.Signal{Text: "take the pills", Kind: brain.KindReminder, Due: t0.Add(-3 * time.Hour)},
			brain.KindReminder, []string{`"take the pills"`, "late by 3 hours"}, []string{"scheduled because"}},
		{"no kind", brain.Signal{Text: "water the plants"}, brain.KindReminder, []string{`"water the plants"`}, []string{"late by"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			w := proactiveWake()
			w.Reason = brain.Reason{Code: brain.ReasonSchedule, Text: "a scheduled item came due"}
			sig := tc.sig
			sig.Type, sig.Source, sig.Chat, sig.Ref, sig.At = brain.SignalScheduleDue, "scheduler", 42, "s1", t0
			w.Signals = []brain.Signal{sig}
			e.srv.Enqueue(openaitest.Answer("Time for it!", "active", 0.9))
			out := think(t, e, w)
			if s := sends(out); len(s) != 1 || s[0].Kind != tc.wantKind {
				t.Errorf("sends = %+v, want kind %s", s, tc.wantKind)
			}
			sys := braintest.SystemText(e.srv.Requests()[0].Body.Messages)
			braintest.CheckText(t, "system prompt", sys, tc.want, tc.dontWant)
		})
	}
}

func TestDailyTokenBudget(t *testing.T) {
	e := newEnv(t, setup{cfg: func(c *cognition.Config) { c.DailyTokenBudget = 100 }})
	e.srv.Enqueue(openaitest.Reply{Content: "hi", PromptTokens: 80, CompletionTokens: 30})
	think(t, e, userWake("hello"))
	if got := e.c.TokensToday(); got != 110 {
		t.Fatalf("TokensToday = %d, want 110", got)
	}

	out := think(t, e, proactiveWake())
	if len(out.Intents) != 0 || len(e.srv.Requests()) != 1 {
		t.Errorf("proactive wake after the budget: intents %+v, requests %d", out.Intents, len(e.srv.Requests()))
	}
	if got := metric(t, e, "anima_cognition_runs_total", "profile", "proactive", "outcome", "budget"); got != 1 {
		t.Errorf("runs{budget} = %v", got)
	}
	if s := sends(think(t, e, userWake("still there?"))); len(s) != 1 {
		t.Errorf("user message after the budget: sends = %+v, want an answer", s)
	}

	e.clock.Advance(24 * time.Hour)
	if s := sends(think(t, e, proactiveWake())); len(s) != 1 {
		t.Errorf("proactive wake the next day: sends = %+v, want an answer", s)
	}
}

func TestRecallFailureThinksWithoutMemory(t *testing.T) {
	e := newEnv(t, setup{mem: failingMemory{}})
	if s := sends(think(t, e, userWake("hi"))); len(s) != 1 {
		t.Errorf("sends = %+v", s)
	}
}

type failingMemory struct{}

func (failingMemory) Recall(context.Context, int64, int64, string, int) (brain.Recall, error) {
	return brain.Recall{}, errors.New("disk on fire")
}

func TestPanickingToolBecomesError(t *testing.T) {
	e := newEnv(t, setup{tools: []brain.Tool{panicTool{}}})
	e.srv.Enqueue(openaitest.Tool("test_panic", `{}`), openaitest.Answer("ok", "active", 0.9))
	think(t, e, userWake("hi"))
	res := toolMessages(e.srv.Requests()[1].Body)
	if len(res) != 1 || !strings.Contains(res[0].Content, "failed internally") {
		t.Errorf("tool result = %+v", res)
	}
}

type panicTool struct{}

func (panicTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{Name: "test_panic", Parameters: []byte(`{"type":"object","additionalProperties":false,"properties":{},"required":[]}`)}
}

func (panicTool) Call(context.Context, brain.ToolCall) (brain.ToolResult, error) { panic("boom") }

func TestRestoredUsageCountsAgainstTheBudget(t *testing.T) {
	e := newEnv(t, setup{cfg: func(c *cognition.Config) { c.DailyTokenBudget = 100 }})
	e.c.RestoreUsage(t0.AddDate(0, 0, -1).Format(time.DateOnly), 500) // yesterday's: ignored
	if got := e.c.TokensToday(); got != 0 {
		t.Fatalf("TokensToday after restoring yesterday = %d, want 0", got)
	}
	e.c.RestoreUsage(t0.Format(time.DateOnly), 150)
	if day, tokens := e.c.Usage(); day != t0.Format(time.DateOnly) || tokens != 150 {
		t.Fatalf("Usage = %s %d", day, tokens)
	}
	if out := think(t, e, proactiveWake()); len(out.Intents) != 0 || len(e.srv.Requests()) != 0 {
		t.Errorf("a restored, spent budget still allowed a proactive run: %+v", out.Intents)
	}
}

// TestDailyUserTokenShare: once a user's runs spent their share, their next message gets
// one plain notice (no model call), later ones nothing, other wakes of theirs nothing;
// other users are not affected; a restored share counts; the next day starts afresh.
func TestDailyUserTokenShare(t *testing.T) {
	e := newEnv(t, setup{cfg: func(c *cognition.Config) {
		c.DailyUserTokenBudget = 100
		c.BudgetNotice = "enough for today"
	}})
	e.srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Reply{Content: "hi", PromptTokens: 80, CompletionTokens: 30}
	})
	think(t, e, userWake("hello")) // 110 tokens: the share is spent
	out := think(t, e, userWake("still there?"))
	if s := sends(out); len(s) != 1 || s[0].Text != "enough for today" || s[0].Kind != brain.KindSystem || !s[0].Plain {
		t.Errorf("message after the share: %+v, want the notice", s)
	}
	if s := sends(think(t, e, userWake("hello?"))); len(s) != 0 {
		t.Errorf("second message after the share: %+v, want nothing (one notice a day)", s)
	}
	if s := sends(think(t, e, proactiveWake())); len(s) != 0 {
		t.Errorf("proactive wake after the share: %+v", s)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	other := userWake("hi, I'm someone else")
	other.User, other.Chat, other.Rel.User, other.Rel.Chat = 8, 43, 8, 43
	if s := sends(think(t, e, other)); len(s) != 1 || s[0].Text == "enough for today" {
		t.Errorf("another user: %+v, want an answer", s)
	}

	day, spent, told, changed := e.c.UserUsage()
	if day != t0.Format(time.DateOnly) || spent[7] != 110 || spent[8] != 110 || !slices.Equal(told, []int64{7}) || !changed {
		t.Errorf("UserUsage = %s %v %v %v", day, spent, told, changed)
	}
	// A restart: the restored share is spent and the user was told.
	e2 := newEnv(t, setup{cfg: func(c *cognition.Config) { c.DailyUserTokenBudget = 100 }})
	e2.c.RestoreUserUsage(day, spent, told)
	if s := sends(think(t, e2, userWake("after a restart"))); len(s) != 0 || len(e2.srv.Requests()) != 0 {
		t.Errorf("after a restart: %+v, %d requests", s, len(e2.srv.Requests()))
	}

	e.clock.Advance(24 * time.Hour)
	if s := sends(think(t, e, userWake("good morning"))); len(s) != 1 || s[0].Text != "hi" {
		t.Errorf("the next day: %+v, want an answer", s)
	}
	if got := metric(t, e, "anima_cognition_runs_total", "profile", "chat", "outcome", "budget"); got != 2 {
		t.Errorf("runs{chat,budget} = %v, want 2", got)
	}
}

// TestBreakerProbes: while the breaker is open, proactive runs never probe; a user
// message may probe once the last try is 5 s old, with one request and no retries; the
// probe's success closes the breaker. Outage says since when the model is unreachable.
func TestBreakerProbes(t *testing.T) {
	e := newEnv(t, setup{opts: func(o *cognition.Options) {
		o.Retries = 2
		o.BreakerThreshold = 2
	}})
	e.srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(503) })
	ctx := context.Background()
	if _, err := e.c.Think(ctx, userWake("one")); !errors.Is(err, cognition.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable once the run's failures open the breaker", err)
	}
	since, down := e.c.Outage()
	if !down || !since.Equal(t0) {
		t.Fatalf("Outage = %v, %v; want since %v", since, down, t0)
	}
	n := len(e.srv.Requests())
	for _, tc := range []struct {
		name    string
		advance time.Duration
		wake    brain.Wake
		want    int // requests sent
	}{
		{"user within the probe gap", 4 * time.Second, userWake("two"), 0},
		{"proactive after the gap", 2 * time.Second, proactiveWake(), 0},
		{"user after the gap: one probe, no retries", 0, userWake("three"), 1},
		{"user right after the failed probe", time.Second, userWake("four"), 0},
	} {
		e.clock.Advance(tc.advance)
		if _, err := e.c.Think(ctx, tc.wake); !errors.Is(err, cognition.ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", tc.name, err)
		}
		if got := len(e.srv.Requests()) - n; got != tc.want {
			t.Errorf("%s: %d requests, want %d", tc.name, got, tc.want)
		}
		n = len(e.srv.Requests())
	}
	if got := metric(t, e, "anima_cognition_breaker_open_since_seconds"); got != float64(t0.Unix()) {
		t.Errorf("open since gauge = %v, want %v", got, t0.Unix())
	}
	e.srv.SetDefault(nil)
	e.clock.Advance(5 * time.Second)
	if s := sends(think(t, e, userWake("five"))); len(s) != 1 {
		t.Errorf("sends after the successful probe = %+v", s)
	}
	if _, down := e.c.Outage(); down {
		t.Error("the breaker is still open after a successful probe")
	}
	if got := metric(t, e, "anima_cognition_breaker_open_since_seconds"); got != 0 {
		t.Errorf("open since gauge = %v after recovery, want 0", got)
	}
}

// TestChargeTokens (issue 34): tokens spent outside a run (memory's embeddings) count in
// the day's budget and the person's share, and TokensAllowed says when either is spent.
func TestChargeTokens(t *testing.T) {
	e := newEnv(t, setup{cfg: func(c *cognition.Config) {
		c.DailyUserTokenBudget = 100
		c.DailyTokenBudget = 1000
	}})
	if !e.c.TokensAllowed(7) || !e.c.TokensAllowed(0) {
		t.Fatal("nothing spent, yet not allowed")
	}
	e.c.ChargeTokens(7, 120)
	if e.c.TokensAllowed(7) || !e.c.TokensAllowed(8) || !e.c.TokensAllowed(0) {
		t.Errorf("after 120 tokens of user 7: allowed 7 %v, 8 %v, anyone %v", e.c.TokensAllowed(7), e.c.TokensAllowed(8), e.c.TokensAllowed(0))
	}
	if _, spent, _, _ := e.c.UserUsage(); spent[7] != 120 || e.c.TokensToday() != 120 {
		t.Errorf("user 7 spent %d, the day %d; want 120 each", spent[7], e.c.TokensToday())
	}
	e.c.ChargeTokens(0, 900)
	if e.c.TokensAllowed(0) || e.c.TokensAllowed(8) {
		t.Error("the day's budget is spent, yet tokens are allowed")
	}
}

// TestOutageLogsOnce (issue 36): an outage writes a line when it starts and names the other
// model only when it was really asked — before, every probe wrote "trying the other model",
// though with the breaker open the other model (the same endpoint) was never asked.
func TestOutageLogsOnce(t *testing.T) {
	var logs braintest.Buffer
	e := newEnv(t, setup{opts: func(o *cognition.Options) {
		o.Retries = -1
		o.BreakerThreshold = 2
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}})
	e.srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(500) })
	ctx := context.Background()
	_, _ = e.c.Think(ctx, userWake("one")) // fast, then smart, fail: open
	for i := range 5 {
		e.clock.Advance(31 * time.Second)
		if _, err := e.c.Think(ctx, userWake(fmt.Sprint("probe ", i))); !errors.Is(err, cognition.ErrUnavailable) {
			t.Fatalf("probe %d: err = %v, want ErrUnavailable", i, err)
		}
	}
	out := logs.String()
	if n := strings.Count(out, "other model"); n != 1 {
		t.Errorf("%d lines name the other model over one outage and 5 probes, want 1 (when it was asked):\n%s", n, out)
	}
	if n := strings.Count(out, "circuit breaker open"); n != 1 {
		t.Errorf("%d lines say the breaker opened, want 1:\n%s", n, out)
	}
}
