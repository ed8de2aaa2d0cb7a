package cognition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// errNoChoices is returned when the endpoint answers without a message.
var errNoChoices = errors.New("response has no choices")

// run is one pass of the tool loop on a starting prompt.
type run struct {
	w          brain.Wake
	profile    brain.Profile
	zone       *time.Location
	model      string
	specs      []brain.ToolSpec
	msgs       []openai.ChatCompletionMessage
	intents    []brain.Intent
	effects    bool // a side-effecting tool ran
	escalated  bool
	toolCalls  int
	toolBudget int
	requests   int
	maxIter    int            // requests before the final answer is forced
	seen       map[string]int // name + canonical args → calls
	drafts     *drafts        // shows the answer as it is written; nil: not drafted
}

// DreamRequests is the most model requests a dream run makes (its last one forced to a
// final answer; no smart retry).
const DreamRequests = 3

func (c *Cognition) newRun(w brain.Wake, profile brain.Profile, model string, start []openai.ChatCompletionMessage, ds *drafts) *run {
	budget := c.cfg.MaxToolCalls
	if profile == brain.ProfileProactive {
		budget = min(budget, c.cfg.ProactiveToolCalls)
	}
	maxIter := c.cfg.MaxIterations
	if profile == brain.ProfileDream {
		maxIter = min(maxIter, DreamRequests-1)
	}
	return &run{
		w: w, profile: profile, zone: c.zone(w), model: model,
		specs:      c.reg.specsFor(profile),
		msgs:       slices.Clip(start), // appends must not write into the shared start
		toolBudget: budget, seen: map[string]int{}, maxIter: maxIter, drafts: ds,
	}
}

// offers reports whether the run currently offers the tool named name.
func (c *Cognition) offers(r *run, name string) bool {
	if name == ToolEscalate && (r.escalated || r.model == c.cfg.SmartModel) {
		return false
	}
	return slices.ContainsFunc(r.specs, func(s brain.ToolSpec) bool { return s.Name == name })
}

// toolDefs returns the definitions of the tools the run currently offers, as sent to the
// endpoint: the profile's cached ones (shared; not to be modified).
func (c *Cognition) toolDefs(r *run) []openai.Tool {
	o := c.reg.offerFor(r.profile)
	if r.escalated || r.model == c.cfg.SmartModel {
		return o.calm
	}
	return o.defs
}

func (c *Cognition) tools(r *run) []brain.ToolSpec {
	out := make([]brain.ToolSpec, 0, len(r.specs))
	for _, s := range r.specs {
		if c.offers(r, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// think runs the fast model, escalating or retrying on the smart model as needed, and
// turns the answer into an Outcome.
func (c *Cognition) think(ctx context.Context, w brain.Wake, profile brain.Profile, rc brain.Recall) (brain.Outcome, error) {
	began := time.Now()
	start := c.BuildMessages(w, rc, c.clock.Now())
	ds := c.newDrafts(w)
	r := c.newRun(w, profile, c.cfg.FastModel, start, ds)
	ans, err := c.loop(ctx, r)
	if err != nil {
		return brain.Outcome{}, err
	}
	retried := false
	if r.model == c.cfg.FastModel && c.cfg.SmartModel != c.cfg.FastModel && profile != brain.ProfileDream &&
		ans.Confidence < c.cfg.ConfidenceThreshold && !r.effects && len(r.intents) == 0 {
		// Nothing has happened yet (messages are only sent from the Outcome), so the turn can
		// be thought again from the start; only one of the two answers is used.
		retried = true
		c.m.smartRetries.Inc()
		// The smart answer replaces the fast one in the same draft: one message in the end.
		ds.clear(ctx)
		r2 := c.newRun(w, profile, c.cfg.SmartModel, start, ds)
		if ans2, err := c.loop(ctx, r2); err != nil {
			c.log.Warn("smart retry failed, keeping the fast answer", "chat", w.Chat, "err", err)
		} else {
			ans, r = ans2, r2
		}
	}
	c.log.Debug("thought", "chat", w.Chat, "reason", w.Reason.Code, "profile", profile, "model", r.model,
		"requests", r.requests, "tool_calls", r.toolCalls, "escalated", r.escalated, "smart_retry", retried,
		"confidence", ans.Confidence, "took", time.Since(began))
	return c.outcome(w, r, ans), nil
}

// loop asks the model until it answers without tool calls, executing the tools it calls.
func (c *Cognition) loop(ctx context.Context, r *run) (answer, error) {
	force := "" // why a final answer is being forced
	for iter := 0; ; iter++ {
		if force == "" && iter >= r.maxIter {
			force = "the step budget of this turn is spent"
		}
		if dl, ok := ctx.Deadline(); ok && force == "" && time.Until(dl) < c.cfg.RequestTimeout {
			force = "the time budget of this turn is spent"
		}
		req := openai.ChatCompletionRequest{Model: r.model, Messages: r.msgs}
		if force != "" {
			req.Messages = append(slices.Clip(r.msgs), openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleSystem,
				Content: "No more tools: " + force + ". Give your final answer now, as the JSON object " +
					`{"response","status","confidence"}.`,
			})
		} else if defs := c.toolDefs(r); len(defs) > 0 {
			req.Tools = defs
			req.ToolChoice = "auto"
		}
		resp, err := c.complete(ctx, r, req)
		if err != nil {
			return answer{}, err
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 || force != "" {
			if !c.formats(r.model) {
				return parseAnswerLoose(msg.Content), nil // the model wrote free text
			}
			return parseAnswer(msg.Content), nil
		}
		calls := make([]openai.ToolCall, len(msg.ToolCalls)) // as echoed back to the endpoint
		for i, tc := range msg.ToolCalls {
			if tc.ID == "" {
				tc.ID = fmt.Sprintf("call_%d_%d", iter, i)
			}
			msg.ToolCalls[i].ID = tc.ID
			tc.Type = openai.ToolTypeFunction
			tc.Index = nil
			tc.Function.Name = wireName(tc.Function.Name)
			calls[i] = tc
		}
		r.msgs = append(r.msgs, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleAssistant, Content: msg.Content, ToolCalls: calls,
		})
		escalate := false
		for _, tc := range msg.ToolCalls { // the names as the model wrote them
			content, esc, f := c.callTool(ctx, r, tc)
			escalate = escalate || esc
			if force == "" {
				force = f
			}
			r.msgs = append(r.msgs, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: content,
			})
		}
		if escalate {
			r.escalated = true
			r.model = c.cfg.SmartModel
			c.m.escalations.Inc()
		}
	}
}

// callTool executes one tool call and returns the text for the model, whether it asked to
// escalate, and a reason to force the final answer (empty if none). It never fails: every
// problem becomes the tool's result, for the model to read.
func (c *Cognition) callTool(ctx context.Context, r *run, tc openai.ToolCall) (content string, escalate bool, force string) {
	name := tc.Function.Name
	tool, spec, known := c.reg.lookup(name)
	label := name
	if !known {
		label = "unknown"
	}
	outcome := "ok"
	defer func() { c.m.toolCalls.WithLabelValues(label, outcome).Inc() }()

	if !known || !c.offers(r, name) {
		if name == ToolEscalate {
			outcome = "refused"
			return "You are already the most capable model. Continue and give your final answer.", false, ""
		}
		outcome = "unknown"
		names := make([]string, 0, len(r.specs))
		for _, s := range c.tools(r) {
			names = append(names, s.Name)
		}
		return fmt.Sprintf("error: there is no tool named %q here. Available tools: %s.", name, strings.Join(names, ", ")), false, ""
	}
	if name == ToolEscalate {
		return "Escalated: a more capable model continues from here, with everything above.", true, ""
	}
	args, err := RepairJSON(tc.Function.Arguments)
	if err != nil {
		outcome = "bad_args"
		return "error: the arguments are not a valid JSON object; call the tool again with arguments that match its schema.", false, ""
	}
	key := name + "\x00" + canonical(args)
	r.seen[key]++
	if r.seen[key] >= 3 {
		outcome = "refused"
		return "error: this exact call was already made twice and its result is above; it was not run again.",
			false, "the same tool call was repeated"
	}
	if r.toolCalls >= r.toolBudget {
		outcome = "refused"
		return "error: the tool call budget of this turn is spent; the call was not run.", false, "the tool call budget is spent"
	}
	r.toolCalls++
	res, err := safeCall(ctx, tool, brain.ToolCall{Chat: r.w.Chat, User: r.w.User, Args: args, Now: c.clock.Now(), Zone: r.zone,
		Earlier: slices.Clip(r.intents)})
	if err != nil {
		outcome = "error"
		return "error: " + err.Error(), false, ""
	}
	if spec.SideEffects {
		r.effects = true
	}
	r.intents = append(r.intents, res.Intents...)
	if strings.TrimSpace(res.Content) == "" {
		return "ok", false, ""
	}
	return res.Content, false, ""
}

// wireName makes a tool name the model wrote acceptable to send back to the endpoint
// (^[a-zA-Z0-9_-]{1,64}$): other bytes become '_'. A name that already matches is kept.
func wireName(name string) string {
	b := []byte(name)
	if len(b) > 64 {
		b = b[:64]
	}
	for i, c := range b {
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "unnamed"
	}
	return string(b)
}

// safeCall runs a tool, turning a panic into an error so a plugin bug cannot crash a run.
func safeCall(ctx context.Context, t brain.Tool, call brain.ToolCall) (res brain.ToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s failed internally", t.Spec().Name)
		}
	}()
	return t.Call(ctx, call)
}

// canonical re-encodes a JSON object with sorted keys, so that argument order does not
// hide a repeated call.
func canonical(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// complete sends req on the run's model, retrying, then falls back to the other model;
// a success on the other model moves the run there.
func (c *Cognition) complete(ctx context.Context, r *run, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	r.requests++
	resp, err := c.request(ctx, req, r.drafts)
	if err == nil {
		c.budget.addUser(r.w.User, resp.Usage.PromptTokens+resp.Usage.CompletionTokens)
	}
	if err == nil || errors.Is(err, ErrUnavailable) || ctx.Err() != nil || c.cfg.SmartModel == c.cfg.FastModel {
		return resp, err
	}
	other := c.cfg.SmartModel
	if req.Model == c.cfg.SmartModel {
		other = c.cfg.FastModel
	}
	c.log.Warn("model failed, trying the other model", "model", req.Model, "other", other, "err", err)
	first := err
	req.Model = other
	if slices.ContainsFunc(req.Tools, func(t openai.Tool) bool { return t.Function.Name == ToolEscalate }) && other == c.cfg.SmartModel {
		req.Tools = slices.DeleteFunc(slices.Clone(req.Tools), func(t openai.Tool) bool { return t.Function.Name == ToolEscalate })
		if len(req.Tools) == 0 {
			req.Tools, req.ToolChoice = nil, nil
		}
	}
	r.requests++
	resp, err = c.request(ctx, req, r.drafts)
	if err != nil {
		return resp, fmt.Errorf("model %s: %w; then model %s: %w", r.model, first, other, err)
	}
	c.budget.addUser(r.w.User, resp.Usage.PromptTokens+resp.Usage.CompletionTokens)
	r.model = other
	return resp, nil
}

// request sends req, retrying endpoint failures (timeouts, 429, 5xx, transport errors)
// with backoff or the endpoint's Retry-After, under the circuit breaker. Other 4xx answers
// are not retried. With ds, the request is streamed and its answer drafted (see send).
func (c *Cognition) request(ctx context.Context, req openai.ChatCompletionRequest, ds *drafts) (openai.ChatCompletionResponse, error) {
	setMaxTokens(&req, c.cfg.MaxOutputTokens)
	var last error
	for attempt := 0; ; attempt++ {
		if !c.brk.allow(c.clock.Now(), mayProbe(ctx)) {
			if last != nil {
				return openai.ChatCompletionResponse{}, fmt.Errorf("%w (last error: %w)", ErrUnavailable, last)
			}
			return openai.ChatCompletionResponse{}, ErrUnavailable
		}
		rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		rctx, slot := withRetryAfterSlot(rctx)
		began := time.Now()
		resp, err := c.sendFormatted(rctx, req, ds)
		cancel()
		err = redactProvider(err) // from here on, what is logged or returned
		c.m.duration.WithLabelValues(req.Model).Observe(time.Since(began).Seconds())
		if err == nil && len(resp.Choices) == 0 {
			err = errNoChoices
		}
		if err == nil {
			c.brk.success()
			c.m.requests.WithLabelValues(req.Model, outcomeOK).Inc()
			c.m.tokens.WithLabelValues(req.Model, "prompt").Add(float64(resp.Usage.PromptTokens))
			c.m.tokens.WithLabelValues(req.Model, "completion").Add(float64(resp.Usage.CompletionTokens))
			c.budget.add(resp.Usage.PromptTokens + resp.Usage.CompletionTokens)
			return resp, nil
		}
		class, retryable := classify(err)
		c.m.requests.WithLabelValues(req.Model, class).Inc()
		if ctx.Err() != nil {
			c.brk.release()
			return openai.ChatCompletionResponse{}, fmt.Errorf("request %s: %w", req.Model, ctx.Err())
		}
		last = fmt.Errorf("request %s: %w", req.Model, err)
		if !retryable {
			c.brk.success() // the endpoint is alive; the request was wrong
			return openai.ChatCompletionResponse{}, last
		}
		now := c.clock.Now()
		c.brk.failure(now)
		if _, open := c.brk.outage(); open || attempt >= c.retries {
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

// classify maps a request error to its metrics outcome and whether it is worth retrying.
func classify(err error) (outcome string, retryable bool) {
	status := httpStatus(err)
	var netErr net.Error
	switch {
	case status == http.StatusTooManyRequests:
		return outcomeRateLimited, true
	case status >= 500:
		return outcomeServerError, true
	case status >= 400:
		return outcomeError, false
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return outcomeTimeout, true
	}
	return outcomeError, true // transport errors, garbled bodies
}

// httpStatus is the HTTP status an endpoint answered a failed request with, from go-openai's
// *APIError (a JSON error body) or *RequestError (any other body); 0 when there was no answer.
func httpStatus(err error) int {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode
	}
	return 0
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

// outcome turns the final answer and the tools' intents into the run's Outcome.
func (c *Cognition) outcome(w brain.Wake, r *run, a answer) brain.Outcome {
	status := a.Status
	if !a.statusSet && a.Response == "" && w.Rel.Status.Valid() {
		status = w.Rel.Status // saying nothing leaves the conversation where it was
	}
	out := brain.Outcome{Intents: r.intents, Status: status, Confidence: a.Confidence, Requests: r.requests}
	a.Response = stripTurnTag(a.Response)
	if a.Response != "" {
		out.Intents = append(out.Intents, brain.SendMessage{
			Chat: w.Chat, Text: a.Response, Kind: c.kind(w), Status: status, ReplyTo: replyTo(w),
		})
	}
	return out
}

// kind says why a message for w is sent.
func (c *Cognition) kind(w brain.Wake) brain.MessageKind {
	switch w.Reason.Code {
	case brain.ReasonUserMessage, string(brain.SignalCommand):
		return brain.KindReply
	case brain.ReasonSchedule:
		for _, s := range w.Signals {
			if s.Type == brain.SignalScheduleDue && s.Kind == brain.KindFollowup {
				return brain.KindFollowup
			}
		}
		return brain.KindReminder
	case brain.ReasonFollowup:
		return brain.KindFollowup
	case brain.ReasonProactive, brain.ReasonThought:
		return brain.KindProactive
	}
	if userText(w) != "" {
		return brain.KindReply
	}
	return brain.KindProactive
}

// replyTo is the platform id of the last user message of the wake.
func replyTo(w brain.Wake) int {
	for i := len(w.Signals) - 1; i >= 0; i-- {
		if s := w.Signals[i]; s.Type == brain.SignalUserMessage && s.MessageID != 0 {
			return s.MessageID
		}
	}
	return 0
}
