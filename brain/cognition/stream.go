package cognition

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/provider"
)

// Streaming is presentation only. When a wake comes with a brain.Drafter (an answer to
// someone in a private chat), every request of the run asks for a stream; the content of a
// step that makes no tool call is shown as a draft while it arrives, and the assembled
// message is then handled exactly like a plain response. The answer itself still leaves as
// a SendMessage intent, through the outbox, once.

// streamOffFor is how long streaming stays off after the endpoint refused a stream.
const streamOffFor = 10 * time.Minute

// errStreamRefused marks an endpoint that would not stream: it refused stream: true (a
// 4xx whose message says streaming is not supported) or answered without server-sent
// events. Any other 4xx is that request's failure alone: streaming stays on.
var errStreamRefused = errors.New("endpoint does not stream")

// send makes one request: as a stream while a draft is being shown and the endpoint
// streams, else as a plain request (also right after a refused stream, within the same
// attempt, so the fallback costs the user nothing but the refused round trip).
func (c *Cognition) send(ctx context.Context, req openai.ChatCompletionRequest, ds *drafts) (openai.ChatCompletionResponse, error) {
	if ds.active() && c.streams() {
		resp, err := c.stream(ctx, req, ds)
		if !errors.Is(err, errStreamRefused) {
			return resp, err
		}
		c.m.streamFallbacks.Inc()
		c.noStreamUntil.Store(c.clock.Now().Add(streamOffFor).UnixNano())
		c.log.Warn("llm endpoint refused to stream; answers are sent whole for a while", "model", req.Model, "for", streamOffFor, "err", redactProvider(err))
	}
	return c.client.CreateChatCompletion(ctx, req)
}

// streams reports whether the endpoint is asked for streams: not while a refusal is recent.
func (c *Cognition) streams() bool {
	return c.clock.Now().UnixNano() >= c.noStreamUntil.Load()
}

// stream asks for req as a stream of deltas (with the usage in a last chunk), shows the
// content on ds while no tool call has appeared, and returns the assembled response.
func (c *Cognition) stream(ctx context.Context, req openai.ChatCompletionRequest, ds *drafts) (openai.ChatCompletionResponse, error) {
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	st, err := c.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		if refusesStream(err) {
			return openai.ChatCompletionResponse{}, fmt.Errorf("%w: %w", errStreamRefused, err)
		}
		return openai.ChatCompletionResponse{}, err
	}
	defer func() { _ = st.Close() }()
	var a assembler
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return openai.ChatCompletionResponse{}, fmt.Errorf("read stream: %w", err)
		}
		hadCalls := len(a.calls) > 0
		a.add(chunk)
		switch {
		case len(a.calls) == 0:
			ds.update(ctx, a.content.String())
		case !hadCalls:
			ds.clear(ctx) // a tool-calling step: what it said before the call is not the answer
		}
	}
	if a.chunks == 0 {
		// An answer without a single "data:" event: a plain JSON body, say.
		return openai.ChatCompletionResponse{}, fmt.Errorf("%w: no server-sent events in the answer", errStreamRefused)
	}
	return a.response(req.Model), nil
}

// refusesStream reports whether an error at the start of a stream says the endpoint will not
// stream: a 4xx (not 401, 403 or 429) whose message speaks of streaming as unsupported,
// as opposed to failing for reasons a plain request would meet too (a bad request,
// throttling, authentication, server errors, the network).
func refusesStream(err error) bool {
	status := provider.Status(err)
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return false
	}
	if status < 400 || status >= 500 {
		return false
	}
	msg := strings.ToLower(redactText(providerMessage(err))) // not the words of a quoted request
	if !strings.Contains(msg, "stream") {
		return false
	}
	for _, no := range []string{"not supported", "unsupported", "does not support", "doesn't support",
		"not available", "not enabled", "not allowed", "disabled"} {
		if strings.Contains(msg, no) {
			return true
		}
	}
	return false
}

// providerMessage is the message of an endpoint's error answer: the JSON error's message,
// or the raw body.
func providerMessage(err error) string {
	_, msg := provider.Answer(err)
	return msg
}

// assembler puts a streamed message back together: content deltas are concatenated, tool
// call deltas are merged by their Index (the id, type and name come in a call's first
// delta, the arguments in pieces), and the usage comes in a last chunk without choices.
type assembler struct {
	id      string
	content strings.Builder
	calls   []openai.ToolCall
	finish  openai.FinishReason
	usage   openai.Usage
	chunks  int
}

func (a *assembler) add(ch openai.ChatCompletionStreamResponse) {
	a.chunks++
	if a.id == "" {
		a.id = ch.ID
	}
	if ch.Usage != nil {
		a.usage = *ch.Usage
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // anima asks for one choice
		}
		a.content.WriteString(choice.Delta.Content)
		for _, d := range choice.Delta.ToolCalls {
			a.addCall(d)
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
		}
	}
}

// addCall merges one tool call delta. Without an Index (some servers omit it), a delta
// carrying an id starts a new call and one without continues the last.
func (a *assembler) addCall(d openai.ToolCall) {
	var i int
	switch {
	case d.Index != nil && *d.Index >= 0 && *d.Index < 128:
		i = *d.Index
	case d.Index == nil && d.ID == "" && len(a.calls) > 0:
		i = len(a.calls) - 1
	default:
		i = len(a.calls)
	}
	for len(a.calls) <= i {
		a.calls = append(a.calls, openai.ToolCall{Type: openai.ToolTypeFunction})
	}
	tc := &a.calls[i]
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Type != "" {
		tc.Type = d.Type
	}
	// The name normally arrives whole in the first delta; a server that repeats it in later
	// deltas must not double it, one that splits it is put together.
	if n := d.Function.Name; n != "" && n != tc.Function.Name {
		tc.Function.Name += n
	}
	tc.Function.Arguments += d.Function.Arguments
}

// response is the assembled message as a plain chat completion response.
func (a *assembler) response(model string) openai.ChatCompletionResponse {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: a.content.String()}
	for _, tc := range a.calls {
		if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments == "" {
			continue // an index the server skipped
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	return openai.ChatCompletionResponse{
		ID: a.id, Object: "chat.completion", Model: model, Usage: a.usage,
		Choices: []openai.ChatCompletionChoice{{Message: msg, FinishReason: a.finish}},
	}
}
