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

// echoCalls is the assistant message of a step that called tools, as echoed back to the
// endpoint: every call with an id (one is made up for a call without, and written back into
// msg's calls too), its type, no index, and a name the endpoint takes.
func echoCalls(msg openai.ChatCompletionMessage, iter int) openai.ChatCompletionMessage {
	calls := make([]openai.ToolCall, len(msg.ToolCalls))
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
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: msg.Content, ToolCalls: calls}
}

// callTools executes a step's tool calls in order (the names as the model wrote them),
// adds their results to the run, and moves the run to the smart model when one asked to
// escalate. It returns force, or else the first reason a call gave to force the final
// answer.
func (c *Cognition) callTools(ctx context.Context, r *run, calls []openai.ToolCall, force string) string {
	escalate := false
	for _, tc := range calls {
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
	return force
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
		return c.noSuchTool(r, name), false, ""
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

// noSuchTool is the result of a call of a tool the run does not offer: the tools it does.
func (c *Cognition) noSuchTool(r *run, name string) string {
	names := make([]string, 0, len(r.specs))
	for _, s := range c.tools(r) {
		names = append(names, s.Name)
	}
	return fmt.Sprintf("error: there is no tool named %q here. Available tools: %s.", name, strings.Join(names, ", "))
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
