package cognition

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

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
