// Package channels connects anima to the places people talk to it. A channel turns what
// arrives (Telegram updates, console lines) into brain signals, records them durably
// before anything else happens, hands them to the core loop, and sends messages back.
// The implementations live in channels/telegram and channels/console.
package channels

import (
	"context"

	"github.com/anima-bot/anima/brain"
)

// Recorder durably records incoming signals together with the channel's position in its
// source (Telegram's next update offset), in one transaction. Implemented by storage.
type Recorder interface {
	// Offset returns the stored position of source (0 if none).
	Offset(source string) (int64, error)
	// Record stores sigs in the inbox, assigns their IDs and sets source's offset to
	// offset (when offset > 0), atomically. The returned signals carry their IDs. The
	// offset may go down: Telegram re-bases update ids after a week without updates.
	Record(source string, sigs []brain.Signal, offset int64) ([]brain.Signal, error)
}

// Sink receives recorded signals: the core loop's inbox (bot checks that it is one). Submit blocks only while the
// inbox is full and returns ctx's error if ctx ends first.
type Sink interface {
	Submit(ctx context.Context, sigs ...brain.Signal) error
}

// Channel is a running channel: it receives until ctx ends and sends messages.
type Channel interface {
	Run(ctx context.Context) error
	Send(ctx context.Context, m brain.SendMessage) error
}
