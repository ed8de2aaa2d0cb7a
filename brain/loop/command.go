package loop

import (
	"context"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// CommandView is what a command handler may read about the chat.
type CommandView struct {
	Rel  brain.Relationship
	Acks []brain.Ack
	Now  time.Time
	Loc  *time.Location
}

// CommandResult is a command's answer and effects.
type CommandResult struct {
	Reply   []brain.SendMessage
	Intents []brain.Intent
	// Forget is set when the handler deleted everything stored about the sender: their
	// private chat (whose id is the sender's id) entirely, and their own data in other
	// chats. The loop then drops what it holds of the private chat; a group the command
	// came from keeps its state.
	Forget bool
}

// CommandHandler answers /commands without the model.
type CommandHandler interface {
	Command(ctx context.Context, sig brain.Signal, view CommandView) (CommandResult, error)
}

// command answers a /command through the handler and commits the answer as a turn.
func (l *Loop) command(ctx context.Context, r *result, sig brain.Signal, view CommandView, inBackoff bool) {
	rec := brain.TurnRecord{Chat: sig.Chat, User: sig.User, At: l.deps.Clock.Now()}
	if sig.ID != 0 {
		rec.Done = []uint64{sig.ID}
	}
	if l.deps.Commands == nil {
		l.commit(ctx, r, rec, inBackoff)
		return
	}
	res, err := l.deps.Commands.Command(ctx, sig, view)
	if err != nil {
		l.log.Error("command failed", "command", commandName(sig.Text), "err", err)
		res.Reply = []brain.SendMessage{{Chat: sig.Chat, Text: "Sorry, that didn't work. Please try again in a moment.", Kind: brain.KindSystem, Plain: true}}
	}
	if res.Forget {
		r.forget = sig.User
	}
	msgs, intents := l.sortIntents(res.Intents)
	rec.Outbox = append(res.Reply, msgs...)
	stampArrival(rec.Outbox, sig)
	rec.Intents = intents
	r.intents = intents
	l.commit(ctx, r, rec, inBackoff)
}

func commandName(text string) string {
	name, _, _ := strings.Cut(text, " ")
	if len(name) > 32 {
		name = name[:32]
	}
	return name
}
