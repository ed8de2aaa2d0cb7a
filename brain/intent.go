package brain

import "time"

// Intent is something a layer or a tool wants done. Only the core loop applies intents,
// each where HomeOf says.
type Intent interface {
	// IntentName is a short name for logs and metrics.
	IntentName() string
}

// Home says where an intent is applied once its turn is done.
type Home uint8

const (
	// InLoop intents are applied by the core loop to its in-memory state (acks, thoughts,
	// relationships, energy) after the turn's commit; the loop's periodic flush persists
	// them.
	InLoop Home = 1 << iota
	// InTurn intents are applied by the loop.Journal inside the turn's transaction, with its
	// history and outbox: all of the turn is written, or none of it.
	InTurn
)

// HomeOf is the one table of where every intent kind is applied (InLoop, InTurn or
// both). A kind missing here is unhandled: the loop logs it, counts it in
// anima_intents_unhandled_total and drops it, and the rest of the turn goes on. A new
// kind gets a row here and a case where it is applied (applyInLoop in brain/loop/apply.go
// for InLoop, the Journal's Commit for InTurn).
func HomeOf(in Intent) Home {
	switch in.(type) {
	case SendMessage: // written as the turn's outbox entry, delivered after the commit
		return InTurn
	case Schedule: // stored in the schedule book
		return InTurn
	case CancelSchedule: // removed from the schedule book
		return InTurn
	case Remember: // stored in the facts of the chat's member
		return InTurn
	case NoteState: // stored in the note of how the chat's member is (brain/memory)
		return InTurn
	case Defer: // a firm deferral of proactive contact in the aggregator's acks
		return InLoop
	case Ack: // the aggregator's acks
		return InLoop
	case EmitThought: // a pending thought of the chat
		return InLoop
	case SetTimezone: // the chat's relationship
		return InLoop
	case UpdateState: // agent-wide energy and alertness
		return InLoop
	case SetSelfNote, ShareLater, ShareUsed: // the chat's relationship (self.go)
		return InLoop
	case PluginChange: // the plugin's own bucket
		return InTurn
	case SetVoice: // the chat's relationship
		return InLoop
	}
	return 0
}

// SendMessage posts a message to a chat through the persistent outbox.
type SendMessage struct {
	Chat   int64              `json:"chat"`
	Text   string             `json:"text"` // Markdown; the channel converts it
	Kind   MessageKind        `json:"kind"`
	Status ConversationStatus `json:"status,omitempty"`
	// ReplyTo is the platform id of the message this answers (used in groups).
	ReplyTo int `json:"reply_to,omitempty"`
	// Buttons is an optional inline keyboard: one slice per row.
	Buttons [][]Button `json:"buttons,omitempty"`
	// Plain sends Text as it is, without Markdown conversion (command answers).
	Plain bool `json:"plain,omitempty"`
	// SkipParts is how many leading parts of a split message were already delivered (a
	// retry after a PartialSendError).
	SkipParts int `json:"skip_parts,omitempty"`
	// Arrived is when the earliest update this message answers arrived (Signal.Received).
	// The loop sets it on the first message of a reply, so the reply latency can be
	// measured when it is delivered, after a restart too; zero on every other message.
	Arrived time.Time `json:"arrived,omitzero"`
	// Voice, when set, is the message spoken: sent as a voice note with Text as its
	// caption, or followed by Text when it is too long for one (voice.go).
	Voice *Voice `json:"voice,omitempty"`
	// Opener is set on a message anima writes first (its Kind, Topic and Subject; At is
	// set on delivery): the relationship's opener ledger records it once it is sent.
	Opener Opener `json:"opener,omitzero"`
	// Shared is, on a reply that brought up a thought anima kept to share, that thought
	// (the share is used up with it); "" on every other message.
	Shared string `json:"shared,omitempty"`
}

// Button is an inline keyboard button; pressing it comes back as a command signal whose
// text is Data (for example "/forget yes").
type Button struct {
	Text string `json:"text"`
	Data string `json:"data"`
}

// ScheduleItem is a follow-up or reminder: one-shot (Due) or recurring (Cron).
type ScheduleItem struct {
	ID      string      `json:"id"`
	Chat    int64       `json:"chat"`
	User    int64       `json:"user"`
	Note    string      `json:"note"`
	Reason  string      `json:"reason,omitempty"` // why it was scheduled (the conversation context)
	Due     time.Time   `json:"due"`              // next due time
	Cron    string      `json:"cron,omitempty"`   // standard 5-field spec for recurring items
	Zone    string      `json:"zone,omitempty"`   // IANA zone the spec is read in
	Created time.Time   `json:"created"`
	Kind    MessageKind `json:"kind,omitempty"` // reminder | followup
}

// Schedule stores a schedule item.
type Schedule struct{ Item ScheduleItem }

// CancelSchedule removes a schedule item of a chat.
type CancelSchedule struct {
	Chat int64
	ID   string
}

// Remember stores (or replaces) a fact about a user in a chat (0: the turn's chat and
// user).
type Remember struct {
	Chat      int64
	User      int64
	Attribute string
	Value     string
}

// Defer holds back proactive contact with a chat until Until (at most 24 h ahead). Such a
// deferral is firm: only expiry or a user message ends it.
type Defer struct {
	Chat   int64
	Until  time.Time
	Reason string
}

// AckKind is how the AckRegistry treats a signal key.
type AckKind string

// Ack kinds.
const (
	AckHandled    AckKind = "handled"    // ignore this signal instance
	AckDeferred   AckKind = "deferred"   // blocked until Until unless the value rises by ≥ 0.25
	AckSuppressed AckKind = "suppressed" // blocked until cleared
)

// Ack records how a signal key is to be treated by the aggregation layer.
type Ack struct {
	Key   string    `json:"key"`
	Kind  AckKind   `json:"kind"`
	Until time.Time `json:"until,omitzero"`
	Value float64   `json:"value,omitempty"` // the signal's value when acknowledged
	// Firm deferrals are never overridden by a rising value (proactive contact deferred by
	// core_defer or /quiet).
	Firm   bool      `json:"firm,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// UpdateState adjusts agent-wide state (energy, alertness) by deltas.
type UpdateState struct {
	EnergyDelta    float64
	AlertnessDelta float64
}

// EmitThought queues a pending thought for a chat; an unhandled thought wakes cognition.
type EmitThought struct {
	Chat int64
	Text string
}

// PluginChange is a change a plugin makes to its own state. The journal hands it back to
// the plugin named Plugin inside the turn's transaction, with the plugin's own bucket, so
// the change is written with the turn or not at all. Chat and User say where and whose it
// is: User is the subject (in a group, the member the change is about), and a change
// without one is refused. Change is the plugin's own value; nothing but the plugin reads it.
type PluginChange struct {
	Plugin string
	Chat   int64
	User   int64
	Change any
}

// IntentName implements Intent.
func (PluginChange) IntentName() string { return "plugin_change" }

// SetTimezone sets a user's own time zone (an IANA name; "" returns to the default).
type SetTimezone struct {
	Chat int64
	Zone string
}

// IntentName implements Intent.
func (SetTimezone) IntentName() string { return "set_timezone" }

// IntentName implements Intent.
func (SendMessage) IntentName() string { return "send_message" }

// IntentName implements Intent.
func (Schedule) IntentName() string { return "schedule" }

// IntentName implements Intent.
func (CancelSchedule) IntentName() string { return "cancel_schedule" }

// IntentName implements Intent.
func (Remember) IntentName() string { return "remember" }

// IntentName implements Intent.
func (Defer) IntentName() string { return "defer" }

// IntentName implements Intent.
func (Ack) IntentName() string { return "ack" }

// IntentName implements Intent.
func (UpdateState) IntentName() string { return "update_state" }

// IntentName implements Intent.
func (EmitThought) IntentName() string { return "emit_thought" }
