// Package brain holds anima's domain types — signals, wakes, intents, state and the
// clock — the small interfaces each layer satisfies, and CoreLoop, which runs the layers
// it is given. The layers (autonomic, aggregation, cognition) import brain; brain imports
// none of them: package bot wires them together.
package brain

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// SignalType names what a signal reports.
type SignalType string

// Signal types known to the core. Plugins may add their own.
const (
	SignalUserMessage     SignalType = "user_message"
	SignalCommand         SignalType = "command" // a /command from the user, handled without the model
	SignalReaction        SignalType = "reaction"
	SignalScheduleDue     SignalType = "schedule_due"
	SignalThought         SignalType = "thought"
	SignalTimeOfDay       SignalType = "time_of_day"
	SignalAlertness       SignalType = "alertness"
	SignalEnergy          SignalType = "energy"
	SignalSocialPressure  SignalType = "social_pressure"
	SignalThoughtPressure SignalType = "thought_pressure"
)

// Signal is one observation: a user's message, a schedule coming due, a neuron noticing a
// change. It is a plain value (no maps, no pointers) so neurons can emit it without
// allocating.
type Signal struct {
	// ID is the inbox sequence number once the signal is durably recorded; 0 for signals
	// that live only in memory (neuron output).
	ID     uint64     `json:"id,omitempty"`
	Type   SignalType `json:"type"`
	Source string     `json:"source"` // "telegram", "console", "scheduler", a neuron's name
	Chat   int64      `json:"chat,omitempty"`
	User   int64      `json:"user,omitempty"`
	// UserName is the sender's first name, for the prompt.
	UserName string    `json:"user_name,omitempty"`
	Text     string    `json:"text,omitempty"`
	Value    float64   `json:"value,omitempty"`
	At       time.Time `json:"at"`
	// Ref identifies what the signal is about: a schedule id for schedule_due, the Telegram
	// update id for updates, a time-of-day period name.
	Ref string `json:"ref,omitempty"`
	// MessageID is the platform's id of the user's message, for replying in groups.
	MessageID int `json:"message_id,omitempty"`
	// Due is when a schedule_due signal was due (its lateness is At − Due).
	Due time.Time `json:"due,omitzero"`
	// Detail is extra context: for schedule_due, why the item was scheduled.
	Detail string `json:"detail,omitempty"`
	// Kind is the message kind a schedule_due signal asks for (reminder | followup).
	Kind MessageKind `json:"kind,omitempty"`
}

// Key is the AckRegistry key of a signal: "type" or "type:chat".
func (s Signal) Key() string { return AckKey(s.Type, s.Chat) }

// AckKey builds the registry key for a signal type and chat (chat 0 = agent-wide).
func AckKey(t SignalType, chat int64) string {
	if chat == 0 {
		return string(t)
	}
	return string(t) + ":" + strconv.FormatInt(chat, 10)
}

// ConversationStatus is where a conversation stands after anima's last message.
type ConversationStatus string

// Conversation statuses, as the model reports them.
const (
	StatusActive         ConversationStatus = "active"
	StatusAwaitingAnswer ConversationStatus = "awaiting_answer"
	StatusClosed         ConversationStatus = "closed"
	StatusIdle           ConversationStatus = "idle"
)

// Valid reports whether s is one of the known statuses.
func (s ConversationStatus) Valid() bool {
	switch s {
	case StatusActive, StatusAwaitingAnswer, StatusClosed, StatusIdle:
		return true
	}
	return false
}

// MessageKind says why a message was sent.
type MessageKind string

// Message kinds (also the `kind` label of anima_messages_sent_total).
const (
	KindReply     MessageKind = "reply"
	KindProactive MessageKind = "proactive"
	KindFollowup  MessageKind = "followup"
	KindReminder  MessageKind = "reminder"
	KindSystem    MessageKind = "system" // command answers, apologies
)

// Profile is a cognition capability profile: which tools a run may use.
type Profile string

// Capability profiles.
const (
	ProfileChat      Profile = "chat"      // all tools
	ProfileProactive Profile = "proactive" // no state-changing tools beyond scheduling and deferring
	ProfileDream     Profile = "dream"     // memory tools only
)

// Reason says why cognition was woken: a short machine code (a metrics label) and a human
// sentence (logged and shown to the model).
type Reason struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// Wake reason codes.
const (
	ReasonUserMessage = "user_message"
	ReasonReaction    = "reaction"
	ReasonSchedule    = "schedule_due"
	ReasonThought     = "thought"
	ReasonProactive   = "proactive"
	ReasonFollowup    = "followup"
)

// Wake asks cognition to think about one chat.
type Wake struct {
	Chat    int64   `json:"chat"`
	User    int64   `json:"user"`
	Reason  Reason  `json:"reason"`
	Profile Profile `json:"profile"`
	// Signals are what triggered the wake; several user messages that arrived while an
	// earlier run for the chat was in flight are folded into one wake.
	Signals []Signal `json:"signals,omitempty"`
	// Rel is a snapshot of the relationship when the wake was made.
	Rel Relationship `json:"rel"`
	At  time.Time    `json:"at"`
}

// UserName is the first name of the person the wake is about ("the user" if unknown),
// cleaned for use inside a prompt or a log line: one line, no control characters, at
// most 64 characters (Telegram's own limit for a first name).
func (w *Wake) UserName() string {
	name := w.Rel.Name
	for _, s := range w.Signals {
		if name != "" {
			break
		}
		name = s.UserName
	}
	name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	name = TruncateRunes(name, 64)
	if name == "" {
		return "the user"
	}
	return name
}

// Outcome is what a cognition run decided.
type Outcome struct {
	Intents    []Intent
	Status     ConversationStatus
	Confidence float64
}

// Thinker is the cognition layer. Think returns an error only when no answer could be
// produced at all (the caller then apologises to a user who wrote); a decision to say
// nothing is an Outcome without a SendMessage.
type Thinker interface {
	Think(ctx context.Context, w Wake) (Outcome, error)
}

// Clock is the source of time for everything in the brain. Tests and `anima sim` use a
// simulated clock.
type Clock interface {
	Now() time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d, or until ctx ends (returning ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
