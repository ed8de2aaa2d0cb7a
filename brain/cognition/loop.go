package cognition

import (
	"context"
	"slices"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/prompt"
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
	tokens     int            // prompt and completion tokens of its requests
	maxIter    int            // requests before the final answer is forced
	seen       map[string]int // name + canonical args → calls
	drafts     *drafts        // shows the answer as it is written; nil: not drafted
	// share is set on a chat run offered a thought to share (prompt.Topic): its answer's
	// topic says whether the message brought it up (shareFormat).
	share bool
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
		specs:      c.offer(profile).specs,
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
	o := c.offer(r.profile)
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
	now := c.clock.Now()
	pr := prompt.Run{Wake: w, Recall: rc, Now: now, Loc: c.zone(w), Offer: c.offer(profile)}
	start := c.prompt.Build(pr)
	topic, ok := c.prompt.Topic(pr) // as Build chose it
	share := ok && !prompt.WritesFirst(w)
	c.countDropped(profile)
	ds := c.newDrafts(w)
	r := c.newRun(w, profile, c.cfg.FastModel, start, ds)
	r.share = share
	ans, err := c.loop(ctx, r)
	if err != nil {
		return brain.Outcome{}, err
	}
	retried, tokens := false, r.tokens
	if r.model == c.cfg.FastModel && c.cfg.SmartModel != c.cfg.FastModel && profile != brain.ProfileDream &&
		ans.Confidence < c.cfg.ConfidenceThreshold && !r.effects && len(r.intents) == 0 {
		// Nothing has happened yet (messages are only sent from the Outcome), so the turn can
		// be thought again from the start; only one of the two answers is used.
		retried = true
		c.m.smartRetries.Inc()
		// The smart answer replaces the fast one in the same draft: one message in the end.
		ds.clear(ctx)
		r2 := c.newRun(w, profile, c.cfg.SmartModel, start, ds)
		r2.share = share
		ans2, err := c.loop(ctx, r2)
		tokens += r2.tokens
		if err != nil {
			c.log.Warn("smart retry failed, keeping the fast answer", "chat", w.Chat, "err", err)
		} else {
			ans, r = ans2, r2
		}
	}
	c.log.Debug("thought", "chat", w.Chat, "reason", w.Reason.Code, "profile", profile, "model", r.model,
		"requests", r.requests, "tool_calls", r.toolCalls, "escalated", r.escalated, "smart_retry", retried,
		"confidence", ans.Confidence, "took", time.Since(began))
	out := c.outcome(w, r, ans, topic, ok)
	out.Model, out.Tokens = r.model, tokens
	return out, nil
}

// loop asks the model until it answers without tool calls, executing the tools it calls.
func (c *Cognition) loop(ctx context.Context, r *run) (answer, error) {
	force := "" // why a final answer is being forced
	for iter := 0; ; iter++ {
		if force == "" {
			force = c.forced(ctx, r, iter)
		}
		resp, err := c.complete(ctx, r, c.chatRequest(r, force))
		if err != nil {
			return answer{}, err
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 || force != "" {
			return c.readAnswer(r.model, msg.Content), nil
		}
		r.msgs = append(r.msgs, echoCalls(msg, iter))
		force = c.callTools(ctx, r, msg.ToolCalls, force)
	}
}

// forced says why the run's final answer is to be forced before its request number iter:
// its step budget or its time is spent; "" while neither is.
func (c *Cognition) forced(ctx context.Context, r *run, iter int) string {
	if iter >= r.maxIter {
		return "the step budget of this turn is spent"
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < c.cfg.RequestTimeout {
		return "the time budget of this turn is spent"
	}
	return ""
}
