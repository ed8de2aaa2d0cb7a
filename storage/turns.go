package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
)

func offsetKey(source string) []byte { return []byte("offset:" + source) }

// Offset returns the stored position of source (Telegram: the next update id to ask for).
func (s *Store) Offset(source string) (int64, error) {
	var off int64
	err := s.View(func(tx *Tx) error {
		v, err := tx.GetRaw(BucketMeta, offsetKey(source))
		if err != nil || len(v) != 8 {
			return err
		}
		off = int64(binary.BigEndian.Uint64(v))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read %s offset: %w", source, err)
	}
	return off, nil
}

// Record stores sigs in the inbox with fresh IDs and sets source's offset to offset (when
// offset > 0), in one transaction: once it returns, the signals survive a crash and the
// source may be told they were received. The offset is set as given, lower or higher:
// the caller knows its source (Telegram re-bases its update ids after a quiet week).
func (s *Store) Record(source string, sigs []brain.Signal, offset int64) ([]brain.Signal, error) {
	out := make([]brain.Signal, len(sigs))
	copy(out, sigs)
	err := s.Update(func(tx *Tx) error {
		for i := range out {
			id, err := tx.NextSeq(BucketInbox)
			if err != nil {
				return err
			}
			out[i].ID = id
			if err := tx.Put(BucketInbox, U64(id), out[i]); err != nil {
				return err
			}
		}
		if offset <= 0 {
			return nil
		}
		return tx.PutRaw(BucketMeta, offsetKey(source), U64(uint64(offset)))
	})
	if err != nil {
		return nil, fmt.Errorf("record %d signals from %s: %w", len(sigs), source, err)
	}
	return out, nil
}

// Pending returns the inbox: recorded signals not yet consumed by a committed turn, in
// the order they were recorded.
func (s *Store) Pending() ([]brain.Signal, error) {
	var sigs []brain.Signal
	err := s.View(func(tx *Tx) error {
		return tx.Scan(BucketInbox, nil, func(_, v []byte) error {
			var sig brain.Signal
			if err := json.Unmarshal(v, &sig); err != nil {
				return fmt.Errorf("decode inbox entry: %w", err)
			}
			sigs = append(sigs, sig)
			return nil
		})
	})
	return sigs, err
}

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
			if err := tx.Delete(BucketInbox, U64(id)); err != nil {
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
			if err := tx.Put(BucketOutbox, U64(id), e); err != nil {
				return err
			}
			entries = append(entries, e)
		}
		if c.Rel != nil {
			if err := tx.Put(BucketRelationships, ID64(c.Rel.Chat), c.Rel); err != nil {
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

// MarkSent removes a delivered outbox entry.
//
// When the entry is the last one in the outbox, its removal does not get a synced commit
// of its own: the store's next commit carries it (most often the next message's Record),
// or one made for it after Options.SentDelay, or Close. No other message can be sent
// before that commit — a message is sent only after a commit put it in the outbox — so
// a crash repeats at most the last message delivered, as it does when the crash comes
// between the send and its removal. An entry with others behind it in the outbox is
// removed at once, before the next is sent.
func (s *Store) MarkSent(id uint64) error {
	if err := s.markSent(id); err != nil {
		return fmt.Errorf("mark outbox entry %d sent: %w", id, err)
	}
	return nil
}

func (s *Store) markSent(id uint64) error {
	if s.sentDelay < 0 {
		return s.Update(func(tx *Tx) error { return tx.Delete(BucketOutbox, U64(id)) })
	}
	// The write lock orders the look at the outbox with every commit: none can add an
	// entry between the look and the removal's being left to the next commit.
	s.mu.RLock()
	defer s.mu.RUnlock()
	btx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	tx := s.newTx(btx)
	s.sentMu.Lock()
	last := true
	err = tx.Scan(BucketOutbox, nil, func(k, _ []byte) error {
		if len(k) == 8 {
			if e := binary.BigEndian.Uint64(k); e != id && !s.sent[e] {
				last = false
				return ErrStop
			}
		}
		return nil
	})
	if err == nil && last {
		s.sent[id] = true
		s.flushLater()
	}
	s.sentMu.Unlock()
	if err != nil || last {
		_ = btx.Rollback()
		return err
	}
	if err := tx.Delete(BucketOutbox, U64(id)); err != nil {
		_ = btx.Rollback()
		return err
	}
	if err := s.carrySent(tx, false); err != nil {
		_ = btx.Rollback()
		return err
	}
	return btx.Commit()
}

// flushLater makes sure a commit comes within sentDelay for what waits (MarkSent,
// RecordSent). The caller holds sentMu.
func (s *Store) flushLater() {
	if s.sentTimer == nil {
		s.sentTimer = s.afterFunc(max(s.sentDelay, 0), func() { _ = s.FlushSent() })
	}
}

// carrySent writes, in tx, what waits for a commit: the removal of delivered outbox
// entries (MarkSent) and the sent message ids (RecordSent) of the chats where a batch has
// gathered, or all of them; it forgets them once tx commits.
func (s *Store) carrySent(tx *Tx, all bool) error {
	s.sentMu.Lock()
	ids := make([]uint64, 0, len(s.sent))
	for id := range s.sent {
		ids = append(ids, id)
	}
	var msgs map[int64][]int
	all = all || s.sentIDsN >= sentFlushAll
	for chat, m := range s.sentIDs {
		if all || len(m) >= sentBatch {
			if msgs == nil {
				msgs = map[int64][]int{}
			}
			msgs[chat] = slices.Clone(m)
		}
	}
	s.sentMu.Unlock()
	if len(ids) == 0 && len(msgs) == 0 {
		return nil
	}
	for _, id := range ids {
		if err := tx.Delete(BucketOutbox, U64(id)); err != nil {
			return err
		}
	}
	for chat, m := range msgs {
		if err := recordSentTx(tx, chat, m); err != nil {
			return err
		}
	}
	tx.OnCommit(func() {
		s.sentMu.Lock()
		defer s.sentMu.Unlock()
		for _, id := range ids {
			delete(s.sent, id)
		}
		for chat, m := range msgs {
			if len(s.sentIDs[chat]) < len(m) {
				continue // forgotten meanwhile
			}
			s.sentIDsN -= len(m)
			if rest := s.sentIDs[chat][len(m):]; len(rest) > 0 {
				s.sentIDs[chat] = rest
			} else {
				delete(s.sentIDs, chat)
			}
		}
		if len(s.sent) == 0 && s.sentTimer != nil {
			s.sentTimer.Stop()
			s.sentTimer = nil
		}
	})
	return nil
}

// FlushSent commits what waits for a commit (MarkSent, RecordSent); it does nothing
// when nothing waits.
func (s *Store) FlushSent() error {
	s.sentMu.Lock()
	s.sentTimer = nil
	n := len(s.sent) + s.sentIDsN
	s.sentMu.Unlock()
	if n == 0 {
		return nil
	}
	if err := s.update(true, func(*Tx) error { return nil }); err != nil {
		return fmt.Errorf("flush sent outbox entries: %w", err)
	}
	return nil
}

// UpdateOutbox rewrites the message of an undelivered outbox entry (a no-op if it is gone).
func (s *Store) UpdateOutbox(id uint64, m brain.SendMessage) error {
	err := s.Update(func(tx *Tx) error {
		var e brain.Outgoing
		found, err := tx.Get(BucketOutbox, U64(id), &e)
		if err != nil || !found {
			return err
		}
		e.Msg = m
		return tx.Put(BucketOutbox, U64(id), e)
	})
	if err != nil {
		return fmt.Errorf("update outbox entry %d: %w", id, err)
	}
	return nil
}

// PendingOutbox returns unsent outbox entries in the order they were written.
func (s *Store) PendingOutbox() ([]brain.Outgoing, error) {
	var out []brain.Outgoing
	err := s.View(func(tx *Tx) error {
		return tx.Scan(BucketOutbox, nil, func(_, v []byte) error {
			var e brain.Outgoing
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode outbox entry: %w", err)
			}
			s.sentMu.Lock()
			sent := s.sent[e.ID]
			s.sentMu.Unlock()
			if sent {
				return nil // delivered; its removal waits for the next commit
			}
			out = append(out, e)
			return nil
		})
	})
	return out, err
}

// History returns up to n of chat's most recent turns, oldest first (n ≤ 0: all).
func (s *Store) History(chat int64, n int) ([]brain.Turn, error) {
	var turns []brain.Turn
	err := s.View(func(tx *Tx) error {
		return tx.HistoryReverse(chat, func(_, v []byte) error {
			var t brain.Turn
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decode history entry: %w", err)
			}
			turns = append(turns, t)
			if n > 0 && len(turns) >= n {
				return ErrStop
			}
			return nil
		})
	})
	for i, j := 0, len(turns)-1; i < j; i, j = i+1, j-1 {
		turns[i], turns[j] = turns[j], turns[i]
	}
	return turns, err
}

// SaveRelationships stores relationships in one transaction.
func (s *Store) SaveRelationships(rels []brain.Relationship) error {
	if len(rels) == 0 {
		return nil
	}
	return s.Update(func(tx *Tx) error {
		for i := range rels {
			if err := tx.Put(BucketRelationships, ID64(rels[i].Chat), &rels[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Relationships returns every stored relationship.
func (s *Store) Relationships() ([]brain.Relationship, error) {
	var rels []brain.Relationship
	err := s.View(func(tx *Tx) error {
		return tx.Scan(BucketRelationships, nil, func(_, v []byte) error {
			var r brain.Relationship
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode relationship: %w", err)
			}
			rels = append(rels, r)
			return nil
		})
	})
	return rels, err
}

// SaveAcks replaces the stored acks with acks.
func (s *Store) SaveAcks(acks []brain.Ack) error {
	return s.Update(func(tx *Tx) error {
		if _, err := tx.DeletePrefix(BucketAcks, nil); err != nil {
			return err
		}
		for _, a := range acks {
			if err := tx.Put(BucketAcks, []byte(a.Key), a); err != nil {
				return err
			}
		}
		return nil
	})
}

// Acks returns the stored acks.
func (s *Store) Acks() ([]brain.Ack, error) {
	var acks []brain.Ack
	err := s.View(func(tx *Tx) error {
		return tx.Scan(BucketAcks, nil, func(_, v []byte) error {
			var a brain.Ack
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("decode ack: %w", err)
			}
			acks = append(acks, a)
			return nil
		})
	})
	return acks, err
}

// DeleteRelationship removes chat's relationship.
func (s *Store) DeleteRelationship(chat int64) error {
	return s.Update(func(tx *Tx) error { return tx.Delete(BucketRelationships, ID64(chat)) })
}

// indexedTurn is a history entry with memory's mark: "ix" is set once the turn is in the
// search index (brain/memory/index.go). Readers that decode brain.Turn ignore the mark.
type indexedTurn struct {
	brain.Turn
	Indexed bool `json:"ix,omitempty"`
}

// DecodeHistory decodes a history entry and reports whether it is marked indexed.
func DecodeHistory(v []byte) (brain.Turn, bool, error) {
	var e indexedTurn
	if err := json.Unmarshal(v, &e); err != nil {
		return brain.Turn{}, false, fmt.Errorf("decode history entry: %w", err)
	}
	return e.Turn, e.Indexed, nil
}

// MarkIndexed marks chat's history entry seq as indexed, in place. In the turn's own
// commit the entry's page is already being written, so the mark costs no page of its
// own. It reports whether the entry exists and was not marked before.
func (t *Tx) MarkIndexed(chat int64, seq uint64) (bool, error) {
	b, k, err := t.historyEntry(chat, seq)
	if err != nil {
		return false, err
	}
	v := b.Get(k)
	if v == nil {
		return false, nil
	}
	var e indexedTurn
	if err := json.Unmarshal(v, &e); err != nil {
		return false, fmt.Errorf("decode history entry: %w", err)
	}
	if e.Indexed {
		return false, nil
	}
	e.Indexed = true
	data, err := json.Marshal(e)
	if err != nil {
		return false, fmt.Errorf("encode history entry: %w", err)
	}
	return true, b.Put(k, data)
}
