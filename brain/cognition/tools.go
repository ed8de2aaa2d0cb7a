package cognition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Names of the core tools implemented in this package.
const (
	ToolEscalate = "core_escalate"
	ToolDefer    = "core_defer"
)

// escalateTool is core_escalate: the loop intercepts it and continues the run on the smart
// model. Its Call is never reached through the loop.
type escalateTool struct{}

func (escalateTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{
		Name: ToolEscalate,
		Description: "Hand this conversation to a more capable model when it needs careful " +
			"reasoning, emotional nuance or you are unsure. The work so far is kept.",
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,` +
			`"properties":{"reason":{"type":"string","description":"why a more capable model is needed"}},` +
			`"required":["reason"]}`),
		Profiles: []brain.Profile{brain.ProfileChat, brain.ProfileProactive},
	}
}

func (escalateTool) Call(context.Context, brain.ToolCall) (brain.ToolResult, error) {
	return brain.ToolResult{}, errors.New("core_escalate is handled by the cognition loop")
}

// maxDefer is the longest a core_defer may hold back proactive contact.
const maxDefer = 24 * time.Hour

// deferTool is core_defer: hold back proactive contact with the chat.
type deferTool struct{}

func (deferTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{
		Name: ToolDefer,
		Description: "Hold back writing first to this person for some hours (at most 24), " +
			"e.g. when they are busy, asleep or asked for space. A message from them ends it.",
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{` +
			`"hours":{"type":"number","description":"how long to wait, more than 0 and at most 24"},` +
			`"reason":{"type":"string","description":"why, in a few words"}},` +
			`"required":["hours","reason"]}`),
		SideEffects: true,
		Profiles:    []brain.Profile{brain.ProfileChat, brain.ProfileProactive},
	}
}

func (deferTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var args struct {
		Hours  *float64 `json:"hours"`
		Reason string   `json:"reason"`
	}
	if err := call.Decode(&args); err != nil {
		return brain.ToolResult{}, err
	}
	if args.Hours == nil || math.IsNaN(*args.Hours) || *args.Hours <= 0 || *args.Hours > maxDefer.Hours() {
		return brain.ToolResult{}, errors.New("hours must be a number greater than 0 and at most 24")
	}
	reason := strings.TrimSpace(args.Reason)
	until := call.Now.Add(time.Duration(*args.Hours * float64(time.Hour)))
	zone := call.Zone
	if zone == nil {
		zone = time.UTC
	}
	return brain.ToolResult{
		Content: fmt.Sprintf("Deferred: you will not write first before %s.", until.In(zone).Format("Mon 15:04")),
		Intents: []brain.Intent{brain.Defer{Chat: call.Chat, Until: until, Reason: reason}},
	}, nil
}
