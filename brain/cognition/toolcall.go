package cognition

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

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
