package cognition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/prompt"
	"github.com/anima-bot/anima/brain/provider"
)

// A request of a run: sent on the run's model with retries under the circuit breaker, then
// on the other model; streamed while a draft is shown (stream.go), with the answer format
// while the model takes it (format.go).

// errNoChoices is returned when the endpoint answers without a message.
var errNoChoices = errors.New("response has no choices")

// chatRequest is the run's next request: its messages with the tools it offers, or, when
// force says why the final answer is due, its messages and a note asking for that answer,
// without tools.
func (c *Cognition) chatRequest(r *run, force string) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: r.model, Messages: r.msgs}
	first := prompt.WritesFirst(r.w)
	switch {
	case first:
		req.ResponseFormat = openerFormat // sendFormatted drops it for a model without formats
	case r.share:
		req.ResponseFormat = shareFormat
	}
	if force != "" {
		final := "Give your final answer now, as the JSON object " + `{"response","status","confidence"}.`
		if first || r.share {
			final = "Give your final answer now, as the JSON object " + `{"response","status","confidence","topic"}.`
		}
		if r.profile == brain.ProfileDream {
			final = "Stop here." // a dream has no answer contract
		}
		req.Messages = append(slices.Clip(r.msgs), openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleSystem, Content: "No more tools: " + force + ". " + final,
		})
	} else if defs := c.toolDefs(r); len(defs) > 0 {
		req.Tools = defs
		req.ToolChoice = "auto"
	}
	return req
}

// complete sends req on the run's model, retrying, then falls back to the other model;
// a success on the other model moves the run there.
func (c *Cognition) complete(ctx context.Context, r *run, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	r.requests++
	resp, err := c.request(ctx, req, r.drafts)
	if err == nil {
		c.budget.addUser(r.w.User, resp.Usage.PromptTokens+resp.Usage.CompletionTokens)
		r.tokens += resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	}
	_, outage := c.Outage()
	if err == nil || errors.Is(err, ErrUnavailable) || ctx.Err() != nil || c.cfg.SmartModel == c.cfg.FastModel || outage {
		// With the breaker open (this was a probe) the other model is not asked either:
		// it is the same endpoint.
		return resp, err
	}
	other := c.cfg.SmartModel
	if req.Model == c.cfg.SmartModel {
		other = c.cfg.FastModel
	}
	first, model := err, req.Model
	req.Model = other
	if other == c.cfg.SmartModel {
		req = withoutEscalate(req)
	}
	r.requests++
	resp, err = c.request(ctx, req, r.drafts)
	if errors.Is(err, ErrUnavailable) { // not sent: the other model was not asked
		return resp, fmt.Errorf("model %s: %w", model, first)
	}
	// Named only when it was really asked, with how it went.
	c.log.Warn("model failed; asked the other model", "model", model, "other", other, "err", first, "other_ok", err == nil)
	if err != nil {
		return resp, fmt.Errorf("model %s: %w; then model %s: %w", r.model, first, other, err)
	}
	c.budget.addUser(r.w.User, resp.Usage.PromptTokens+resp.Usage.CompletionTokens)
	r.tokens += resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	r.model = other
	return resp, nil
}

// withoutEscalate is req without core_escalate among its tools (nor a tool choice when no
// tool is left), for the smart model; req's tools are not modified.
func withoutEscalate(req openai.ChatCompletionRequest) openai.ChatCompletionRequest {
	if slices.ContainsFunc(req.Tools, func(t openai.Tool) bool { return t.Function.Name == ToolEscalate }) {
		req.Tools = slices.DeleteFunc(slices.Clone(req.Tools), func(t openai.Tool) bool { return t.Function.Name == ToolEscalate })
		if len(req.Tools) == 0 {
			req.Tools, req.ToolChoice = nil, nil
		}
	}
	return req
}

// request sends req, retrying endpoint failures (timeouts, 429, 5xx, transport errors)
// with backoff or the endpoint's Retry-After, under the circuit breaker. Other 4xx answers
// are not retried. With ds, the request is streamed and its answer drafted (see send).
func (c *Cognition) request(ctx context.Context, req openai.ChatCompletionRequest, ds *drafts) (openai.ChatCompletionResponse, error) {
	setMaxTokens(&req, c.cfg.MaxOutputTokens)
	var last error
	for attempt := 0; ; attempt++ {
		if !c.brk.Allow(c.clock.Now(), mayProbe(ctx)) {
			if last != nil {
				return openai.ChatCompletionResponse{}, fmt.Errorf("%w (last error: %w)", ErrUnavailable, last)
			}
			return openai.ChatCompletionResponse{}, ErrUnavailable
		}
		resp, slot, err := c.attempt(ctx, req, ds)
		if err == nil {
			c.succeeded(req.Model, resp.Usage)
			return resp, nil
		}
		class, retryable := provider.Classify(err)
		c.m.requests.WithLabelValues(req.Model, class).Inc()
		if ctx.Err() != nil {
			c.brk.Release()
			return openai.ChatCompletionResponse{}, fmt.Errorf("request %s: %w", req.Model, ctx.Err())
		}
		last = fmt.Errorf("request %s: %w", req.Model, err)
		if !retryable {
			c.brk.Success() // the endpoint is alive; the request was wrong
			return openai.ChatCompletionResponse{}, last
		}
		now := c.clock.Now()
		c.brk.Failure(now)
		if _, open := c.brk.Outage(); open || attempt >= c.retries {
			// An open breaker is not retried: a probe is one request.
			return openai.ChatCompletionResponse{}, last
		}
		wait := c.backoff << attempt
		if ra, ok := slot.wait(now); ok {
			wait = ra
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return openai.ChatCompletionResponse{}, last // no time left to wait: try the other model
		}
		c.log.Debug("llm request failed, retrying", "model", req.Model, "outcome", class, "wait", wait, "err", err)
		if err := c.sleep(ctx, wait); err != nil {
			return openai.ChatCompletionResponse{}, fmt.Errorf("request %s: %w", req.Model, err)
		}
	}
}

// attempt makes one try of req within RequestTimeout and times it. Its error is redacted
// (from here on, what is logged or returned), an answer without choices is errNoChoices,
// and slot holds the Retry-After the endpoint sent.
func (c *Cognition) attempt(ctx context.Context, req openai.ChatCompletionRequest, ds *drafts) (openai.ChatCompletionResponse, *retryAfterSlot, error) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	rctx, slot := withRetryAfterSlot(rctx)
	began := time.Now()
	resp, err := c.sendFormatted(rctx, req, ds)
	cancel()
	err = redactProvider(err)
	c.m.duration.WithLabelValues(req.Model).Observe(time.Since(began).Seconds())
	if err == nil && len(resp.Choices) == 0 {
		err = errNoChoices
	}
	return resp, slot, err
}

// succeeded books an answered request: the breaker closes, and its tokens count in the
// metrics and the day's budget.
func (c *Cognition) succeeded(model string, usage openai.Usage) {
	c.brk.Success()
	c.m.requests.WithLabelValues(model, outcomeOK).Inc()
	c.m.tokens.WithLabelValues(model, "prompt").Add(float64(usage.PromptTokens))
	c.m.tokens.WithLabelValues(model, "completion").Add(float64(usage.CompletionTokens))
	c.budget.add(usage.PromptTokens + usage.CompletionTokens)
}

// setMaxTokens caps the response: reasoning models take max_completion_tokens, the others
// (and most OpenAI-compatible servers) max_tokens.
func setMaxTokens(req *openai.ChatCompletionRequest, n int) {
	m := req.Model
	if strings.HasPrefix(m, "o1") || strings.HasPrefix(m, "o3") || strings.HasPrefix(m, "o4") ||
		strings.HasPrefix(m, "gpt-5") || strings.HasPrefix(m, "gpt-6") {
		req.MaxCompletionTokens, req.MaxTokens = n, 0
		return
	}
	req.MaxTokens, req.MaxCompletionTokens = n, 0
}
