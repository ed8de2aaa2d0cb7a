package brain

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
