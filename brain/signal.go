package brain

import (
	"strconv"
	"time"
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
	// Detail is extra context: for schedule_due, why the item was scheduled; for a
	// reaction, the start of anima's message it is on ("" if the channel does not know).
	Detail string `json:"detail,omitempty"`
	// Kind is the message kind a schedule_due signal asks for (reminder | followup).
	Kind MessageKind `json:"kind,omitempty"`
	// Media is the file a user message carries (a voice note, a photo, a document), nil
	// for plain text. Text is then the caption, if any, until perception rewrites it.
	Media *Media `json:"media,omitempty"`
	// Received is when anima recorded the signal (its arrival), by the recording side's
	// clock; the reply latency is measured from it. Zero for signals recorded before the
	// field existed and for signals that live only in memory.
	Received time.Time `json:"received,omitzero"`
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
