package brain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ToolSpec describes a tool to the model. Parameters is a strict JSON schema object (every
// property required, additionalProperties false, optional fields as a null union).
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// SideEffects is true when calling the tool changes state (the smart retry is then
	// skipped).
	SideEffects bool
	// Profiles lists the capability profiles that may use the tool, and no other profile is
	// offered it, ProfileChat included; an empty list means ProfileChat alone.
	Profiles []Profile
}

// ToolCall is one invocation of a tool by the model.
type ToolCall struct {
	Chat int64
	User int64
	Args json.RawMessage
	Now  time.Time
	Zone *time.Location // the user's zone
	// Earlier are the intents the run's earlier tool calls produced, so a tool can limit
	// what one run may do (core_schedule counts the reminders already scheduled).
	Earlier []Intent
}

// Decode decodes the call's arguments into v strictly: one JSON object, no unknown
// fields, nothing after it. The error says what is wrong, for the model to read.
func (c ToolCall) Decode(v any) error {
	dec := json.NewDecoder(bytes.NewReader(c.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	if dec.More() {
		return errors.New("invalid arguments: trailing data after the JSON object")
	}
	return nil
}

// ToolResult is what a tool hands back: text for the model, intents for the core loop.
type ToolResult struct {
	Content string
	Intents []Intent
}

// Tool is a capability the model can call. Call returns an error for bad arguments or a
// failed lookup; the error text goes back to the model as the tool's result.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, call ToolCall) (ToolResult, error)
}
