package brain

import (
	"errors"
	"fmt"
)

// ErrModelUnavailable is returned (wrapped) by a Thinker when the model cannot be reached
// (an outage, not a refusal): the core loop holds the user's messages, tells the user once
// per outage, and answers them when the model is back.
var ErrModelUnavailable = errors.New("model endpoint unavailable")

// ErrBlocked is returned (wrapped) by a loop.Sender when the user has blocked the bot or
// the chat is gone (Telegram 403); the relationship then goes dormant.
var ErrBlocked = errors.New("recipient blocked the bot")

// ErrUndeliverable is returned (wrapped) by a loop.Sender for a message that can never be
// delivered as it is (the platform rejects it, or nothing of it is visible); the outbox
// drops it instead of retrying.
var ErrUndeliverable = errors.New("message cannot be delivered")

// PartialSendError is returned by a loop.Sender that delivered the first Sent parts of a
// long message and then failed: a retry sets SendMessage.SkipParts to Sent so the user
// does not get those parts twice. Sent counts the message's parts from its first, those
// an earlier try delivered (skipped by this one) included.
type PartialSendError struct {
	Sent int
	Err  error
}

func (e *PartialSendError) Error() string {
	return fmt.Sprintf("%d parts delivered, then: %v", e.Sent, e.Err)
}

// Unwrap returns the error that stopped the delivery.
func (e *PartialSendError) Unwrap() error { return e.Err }
