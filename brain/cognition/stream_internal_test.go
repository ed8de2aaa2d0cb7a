package cognition

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sashabaranov/go-openai"
)

func idx(i int) *int { return &i }

func TestAssemblerMergesToolCallDeltasByIndex(t *testing.T) {
	chunk := func(d openai.ChatCompletionStreamChoiceDelta, finish openai.FinishReason) openai.ChatCompletionStreamResponse {
		return openai.ChatCompletionStreamResponse{ID: "c1", Choices: []openai.ChatCompletionStreamChoice{{Delta: d, FinishReason: finish}}}
	}
	call := func(i *int, id, name, args string) openai.ChatCompletionStreamChoiceDelta {
		return openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{{Index: i, ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: name, Arguments: args}}}}
	}
	var a assembler
	for _, ch := range []openai.ChatCompletionStreamResponse{
		chunk(openai.ChatCompletionStreamChoiceDelta{Role: "assistant", Content: "Let me "}, ""),
		chunk(openai.ChatCompletionStreamChoiceDelta{Content: "check."}, ""),
		chunk(call(idx(0), "call_a", "memo", ""), ""),
		chunk(call(idx(1), "call_b", "core_remember", `{"attr`), ""), // the second call starts before the first is done
		chunk(call(idx(0), "", "", `{"note":`), ""),
		chunk(call(idx(1), "", "", `ibute":"tea"}`), ""),
		chunk(call(idx(0), "", "", `"x"}`), ""),
		chunk(openai.ChatCompletionStreamChoiceDelta{}, openai.FinishReasonToolCalls),
		{ID: "c1", Choices: []openai.ChatCompletionStreamChoice{}, Usage: &openai.Usage{PromptTokens: 30, CompletionTokens: 12, TotalTokens: 42}},
	} {
		a.add(ch)
	}
	got := a.response("m")
	want := openai.ChatCompletionResponse{
		ID: "c1", Object: "chat.completion", Model: "m",
		Usage: openai.Usage{PromptTokens: 30, CompletionTokens: 12, TotalTokens: 42},
		Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonToolCalls, Message: openai.ChatCompletionMessage{
			Role: "assistant", Content: "Let me check.",
			ToolCalls: []openai.ToolCall{
				{ID: "call_a", Type: "function", Function: openai.FunctionCall{Name: "memo", Arguments: `{"note":"x"}`}},
				{ID: "call_b", Type: "function", Function: openai.FunctionCall{Name: "core_remember", Arguments: `{"attribute":"tea"}`}},
			},
		}}},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(openai.ChatCompletionResponse{})); diff != "" {
		t.Fatalf("assembled (-want +got):\n%s", diff)
	}
}

func TestAssemblerWithoutIndex(t *testing.T) {
	var a assembler
	for _, d := range []openai.ToolCall{
		{ID: "a", Function: openai.FunctionCall{Name: "memo", Arguments: `{"no`}},
		{Function: openai.FunctionCall{Arguments: `te":"1"}`}},
		{ID: "b", Function: openai.FunctionCall{Name: "memo", Arguments: `{}`}},
		{Function: openai.FunctionCall{Name: "memo"}}, // a server repeating the name
	} {
		a.add(openai.ChatCompletionStreamResponse{Choices: []openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{d}}}}})
	}
	calls := a.response("m").Choices[0].Message.ToolCalls
	if len(calls) != 2 || calls[0].Function.Arguments != `{"note":"1"}` || calls[1].ID != "b" || calls[1].Function.Name != "memo" {
		t.Fatalf("calls = %+v", calls)
	}
}

func TestDraftText(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"empty", "  \n", ""},
		{"prose", "Hello there, how", "Hello there, how"},
		{"prose quoting JSON", `Sure: {"response": "x"}`, `Sure: {"response": "x"}`},
		{"object opening", `{"resp`, ""},
		{"response key, no value yet", `{"response": `, ""},
		{"response growing", `{"response": "Hello the`, "Hello the"},
		{"escapes", `{"response": "line\nnext \"q\" \u00e9`, "line\nnext \"q\" é"},
		{"cut inside an escape", `{"response": "caf\u00`, "caf"},
		{"cut after a backslash", `{"response": "a\`, "a"},
		{"status first", `{"status": "active", "confidence": 0.9, "response": "Hi`, "Hi"},
		{"nested response is not the answer", `{"meta": {"response": "no"}, "status": "act`, ""},
		{"string value named response", `{"status": "response", "x": 1`, ""},
		{"no response field", `{"status": "active", "confidence": 0.9}`, ""},
		{"fence opening", "``", ""},
		{"fence first line", "```js", ""},
		{"fenced object", "```json\n{\"response\": \"Hey", "Hey"},
		{"fence and object on one line", "```json {\"response\": \"Hey", "Hey"},
		{"code block in prose", "```go\nfmt.Println()", "```go\nfmt.Println()"},
		{"response not a string", `{"response": 42, "status"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := draftText(tc.content); got != tc.want {
				t.Errorf("draftText(%q) = %q, want %q", tc.content, got, tc.want)
			}
		})
	}
}

// FuzzDraftText: a draft of a structured answer never shows more than the answer's text
// will be, and never panics.
func FuzzDraftText(f *testing.F) {
	for _, s := range []string{`{"response": "hi", "confidence": 0.5}`, "```json\n{\"response\":\"a\\nb\"}\n```", "plain words", `{"response":"\u00e9"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		for i := 0; i <= len(content); i++ {
			_ = draftText(content[:i])
		}
		final := parseAnswer(content)
		if d := draftText(content); d != "" && content != "" && final.Response == "" {
			if _, structured := parseAnswerJSON(content); structured {
				t.Errorf("draft %q shown for a structured answer without a response", d)
			}
		}
	})
}
