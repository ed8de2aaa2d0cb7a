package storage

import (
	"fmt"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Commit is everything a finished turn writes at once.
type Commit struct {
	// Done are the inbox ids this turn consumed.
	Done []uint64
	// Chat's history gains Turns.
	Chat  int64
	Turns []brain.Turn
	// User is whom the turn answered; the outbox entries record it (brain.Outgoing.User).
	User int64
	// Outbox are the messages to send.
	Outbox []brain.SendMessage
	// Rel, when set, is stored as the chat's relationship.
	Rel *brain.Relationship
	// Also runs inside the same transaction (memory, schedules); may be nil.
	Also func(tx *Tx) error
}

// CommitTurn applies c atomically and returns the outbox entries it created.
func (s *Store) CommitTurn(c Commit, now time.Time) ([]brain.Outgoing, error) {
	var entries []brain.Outgoing
	err := s.Update(func(tx *Tx) error {
		entries = entries[:0]
		for _, id := range c.Done {
			if err := tx.Delete(BucketInbox, brain.U64(id)); err != nil {
				return err
			}
		}
		if err := tx.appendHistory(c.Chat, c.Turns); err != nil {
			return err
		}
		for _, m := range c.Outbox {
			id, err := tx.NextSeq(BucketOutbox)
			if err != nil {
				return err
			}
			e := brain.Outgoing{ID: id, Msg: m, Created: now, User: c.User}
			if err := tx.Put(BucketOutbox, brain.U64(id), e); err != nil {
				return err
			}
			if err := putVoice(tx, id, m); err != nil {
				return err
			}
			entries = append(entries, e)
		}
		if c.Rel != nil {
			if err := tx.Put(BucketRelationships, brain.ID64(c.Rel.Chat), c.Rel); err != nil {
				return err
			}
		}
		if c.Also != nil {
			return c.Also(tx)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("commit turn for chat: %w", err)
	}
	return entries, nil
}
