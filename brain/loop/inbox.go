package loop

import (
	"context"

	"github.com/anima-bot/anima/brain"
)

// inboxSize is how many submissions an Inbox holds before Submit blocks.
const inboxSize = 1024

// Inbox carries recorded signals to the core loop: the channels and the scheduler submit
// what they have durably recorded (the store's inbox), the loop takes it in. Create it
// first and give it to both sides — to the channels as their sink, to New — so
// neither has to exist before the other.
type Inbox struct {
	c chan []brain.Signal
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox { return &Inbox{c: make(chan []brain.Signal, inboxSize)} }

// Submit hands recorded signals to the loop. It blocks only while the inbox is full and
// returns ctx's error if ctx ends first.
func (in *Inbox) Submit(ctx context.Context, sigs ...brain.Signal) error {
	if len(sigs) == 0 {
		return nil
	}
	return hand(ctx, in.c, sigs)
}

// hand sends v on c, blocking until the loop takes it; it returns ctx's error if ctx
// ends first.
func hand[T any](ctx context.Context, c chan<- T, v T) error {
	select {
	case c <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
