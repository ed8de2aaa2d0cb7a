package brain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrBlocked is returned (wrapped) by a Sender when the user has blocked the bot or the chat
// is gone (Telegram 403); the relationship then goes dormant.
var ErrBlocked = errors.New("recipient blocked the bot")

// ErrUndeliverable is returned (wrapped) by a Sender for a message that can never be
// delivered as it is (the platform rejects it, or nothing of it is visible); the outbox
// drops it instead of retrying.
var ErrUndeliverable = errors.New("message cannot be delivered")

// PartialSendError is returned by a Sender that delivered the first Sent parts of a long
// message and then failed: a retry sets SendMessage.SkipParts so the user does not get
// those parts twice.
type PartialSendError struct {
	Sent int
	Err  error
}

func (e *PartialSendError) Error() string {
	return fmt.Sprintf("%d parts delivered, then: %v", e.Sent, e.Err)
}

// Unwrap returns the error that stopped the delivery.
func (e *PartialSendError) Unwrap() error { return e.Err }

// Turn is one message of a conversation's history.
type Turn struct {
	Seq  uint64      `json:"seq,omitempty"`
	Role string      `json:"role"` // "user" | "assistant"
	Text string      `json:"text"`
	At   time.Time   `json:"at"`
	Kind MessageKind `json:"kind,omitempty"` // for assistant turns
}

// Fact is something anima knows about a user (from core_remember).
type Fact struct {
	Attribute string    `json:"attribute"`
	Value     string    `json:"value"`
	At        time.Time `json:"at"`
}

// Hit is one memory search result.
type Hit struct {
	Source string    `json:"source"` // "turn" | "summary" | "fact"
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
	Score  float64   `json:"score"`
}

// Recall is what memory contributes to a prompt: facts, the persisted summary of older
// turns, the last turns verbatim, and memories relevant to the wake.
type Recall struct {
	Facts    []Fact
	Summary  string
	Turns    []Turn
	Memories []Hit
}

// ToolSpec describes a tool to the model. Parameters is a strict JSON schema object (every
// property required, additionalProperties false, optional fields as a null union).
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// SideEffects is true when calling the tool changes state (the smart retry is then
	// skipped).
	SideEffects bool
	// Profiles lists the capability profiles that may use the tool.
	Profiles []Profile
}

// ToolCall is one invocation of a tool by the model.
type ToolCall struct {
	Chat int64
	User int64
	Args json.RawMessage
	Now  time.Time
	Zone *time.Location // the user's zone
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
