package openaitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

var strictParams = json.RawMessage(`{"type":"object","additionalProperties":false,
 "properties":{"note":{"type":"string"},"hours":{"type":["number","null"]},
  "when":{"type":"object","additionalProperties":false,"properties":{"at":{"type":"string"}},"required":["at"]}},
 "required":["note","hours","when"]}`)

func tool(name string, params json.RawMessage) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: name, Strict: true, Parameters: params}}
}

func userReq(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: "fast", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "be kind"}, {Role: "user", Content: text}}}
}

func TestEchoDefault(t *testing.T) {
	s := openaitest.New(t)
	resp, err := s.Client(5*time.Second).CreateChatCompletion(context.Background(), userReq("hi there"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"confidence":0.9,"response":"echo: hi there","status":"active"}`
	if got := resp.Choices[0].Message.Content; got != want {
		t.Errorf("content = %s, want %s", got, want)
	}
	if resp.Usage.PromptTokens < 1 || resp.Usage.CompletionTokens < 1 {
		t.Errorf("usage = %+v, want tokens reported", resp.Usage)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Body.Model != "fast" || len(reqs[0].Raw) == 0 {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestScriptPerModelAndToolRoundTrip(t *testing.T) {
	s := openaitest.New(t)
	s.Enqueue(openaitest.Answer("smart says", "active", 1).ForModel("smart"),
		openaitest.Tool("core_remember", `{"note":"x"}`))
	c := s.Client(5 * time.Second)
	ctx := context.Background()

	req := userReq("hello")
	req.Tools = []openai.Tool{tool("core_remember", strictParams)}
	req.ToolChoice = "auto"
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "core_remember" {
		t.Fatalf("message = %+v, want the queued tool call (the smart reply must wait)", msg)
	}
	req.Messages = append(req.Messages, msg, openai.ChatCompletionMessage{
		Role: "tool", ToolCallID: msg.ToolCalls[0].ID, Content: "ok"})
	req.Model = "smart"
	resp, err = c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Choices[0].Message.Content, "smart says") {
		t.Errorf("content = %q", resp.Choices[0].Message.Content)
	}
	if s.Pending() != 0 {
		t.Errorf("pending = %d", s.Pending())
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestErrors(t *testing.T) {
	s := openaitest.New(t)
	s.Enqueue(
		openaitest.Reply{Status: 429, Message: "slow down", RetryAfter: "7"},
		openaitest.Reply{Status: 502, Body: "<html>bad gateway</html>"},
	)
	c := s.Client(5 * time.Second)
	_, err := c.CreateChatCompletion(context.Background(), userReq("a"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Message != "slow down" {
		t.Errorf("err = %v, want *APIError 429", err)
	}
	_, err = c.CreateChatCompletion(context.Background(), userReq("b"))
	var reqErr *openai.RequestError
	if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != 502 {
		t.Errorf("err = %v, want *RequestError 502", err)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	s := openaitest.New(t)
	s.Enqueue(openaitest.Reply{Status: 429, RetryAfter: "3"})
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
		t.Errorf("status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func TestHangUntilClientGivesUp(t *testing.T) {
	s := openaitest.New(t)
	s.Enqueue(openaitest.Reply{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Client(5*time.Second).CreateChatCompletion(ctx, userReq("a"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
}

func TestValidation(t *testing.T) {
	loose := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":[]}`)
	nested := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
	  "o":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}},"required":["o"]}`)
	arrayItems := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
	  "xs":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"b":{"type":"string"}},"required":[]}}},"required":["xs"]}`)
	tests := []struct {
		name string
		edit func(r *openai.ChatCompletionRequest) // applied to a valid request
		want string
	}{
		{"no model", func(r *openai.ChatCompletionRequest) { r.Model = "" }, "model is empty"},
		{"no messages", func(r *openai.ChatCompletionRequest) { r.Messages = nil }, "messages is empty"},
		{"bad role", func(r *openai.ChatCompletionRequest) {
			r.Messages = append(r.Messages, openai.ChatCompletionMessage{Role: "robot", Content: "x"})
		}, `invalid role "robot"`},
		{"orphan tool message", func(r *openai.ChatCompletionRequest) {
			r.Messages = append(r.Messages, openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_9", Content: "x"})
		}, "no preceding assistant message issued"},
		{"unissued tool call id", func(r *openai.ChatCompletionRequest) {
			r.Messages = append(r.Messages,
				openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "made_up", Type: "function", Function: openai.FunctionCall{Name: "a", Arguments: "{}"}}}},
				openai.ChatCompletionMessage{Role: "tool", ToolCallID: "made_up", Content: "x"})
		}, "never issued"},
		{"bad tool name", func(r *openai.ChatCompletionRequest) {
			r.Tools = []openai.Tool{tool("core.remember", strictParams)}
		}, "does not match"},
		{"not strict", func(r *openai.ChatCompletionRequest) {
			r.Tools = []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "a", Parameters: strictParams}}}
		}, "not strict"},
		{"loose schema", func(r *openai.ChatCompletionRequest) {
			r.Tools = []openai.Tool{tool("a", loose)}
		}, "additionalProperties must be false"},
		{"nested loose schema", func(r *openai.ChatCompletionRequest) {
			r.Tools = []openai.Tool{tool("a", nested)}
		}, "parameters.o: additionalProperties must be false"},
		{"array items not required", func(r *openai.ChatCompletionRequest) {
			r.Tools = []openai.Tool{tool("a", arrayItems)}
		}, `parameters.xs[]: property "b" is not in required`},
		{"tool choice without tools", func(r *openai.ChatCompletionRequest) {
			r.ToolChoice = "auto"
		}, "tool_choice is set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openaitest.New(t)
			req := userReq("x")
			tc.edit(&req)
			_, err := s.Client(5*time.Second).CreateChatCompletion(context.Background(), req)
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
				t.Fatalf("err = %v, want 400", err)
			}
			v := s.Violations()
			if len(v) == 0 || !strings.Contains(strings.Join(v, "\n"), tc.want) {
				t.Errorf("violations = %q, want one containing %q", v, tc.want)
			}
		})
	}
}

func TestCheckSchemaAcceptsStrict(t *testing.T) {
	if p := openaitest.CheckSchema(strictParams); len(p) != 0 {
		t.Errorf("CheckSchema = %v, want none", p)
	}
	if p := openaitest.CheckSchema(json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{},"required":[]}`)); len(p) != 0 {
		t.Errorf("empty object schema: %v", p)
	}
	if p := openaitest.CheckSchema(json.RawMessage(`[]`)); len(p) == 0 {
		t.Error("array accepted as parameters")
	}
}
