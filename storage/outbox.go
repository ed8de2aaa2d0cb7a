package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/anima-bot/anima/brain"
)

// MarkSent removes a delivered outbox entry.
//
// When the entry is the last one in the outbox, its removal does not get a synced commit
// of its own: its id goes to the sent log (a write(2), no fsync; sentlog.go), and the
// store's next commit carries the removal (most often the next message's Record), or one
// made for it after Options.SentDelay, or Close. A killed process's write survives in
// the page cache, so the next Open removes the entry: a kill repeats only a reply in
// flight. A power loss before that commit may lose the log's write and repeat the last
// message delivered — no other can be sent before the commit, as a message is sent only
// after a commit put it in the outbox. An entry with others behind it in the outbox is
// removed at once, before the next is sent.
func (s *Store) MarkSent(id uint64) error {
	if err := s.markSent(id); err != nil {
		return fmt.Errorf("mark outbox entry %d sent: %w", id, err)
	}
	return nil
}

func (s *Store) markSent(id uint64) error {
	if s.sentDelay < 0 {
		return s.Update(func(tx *Tx) error { return deleteOutboxTx(tx, id) })
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
				return brain.ErrStop
			}
		}
		return nil
	})
	if err == nil && last {
		// The sent log keeps the mark for a restart after a kill (sentlog.go); if it
		// cannot, the removal gets a commit of its own below.
		if s.log.append(id) == nil {
			s.sent[id] = true
			s.flushLater()
		} else {
			last = false
		}
	}
	s.sentMu.Unlock()
	if err != nil || last {
		_ = btx.Rollback()
		return err
	}
	if err := deleteOutboxTx(tx, id); err != nil {
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
		if err := deleteOutboxTx(tx, id); err != nil {
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
		if len(s.sent) == 0 {
			if s.sentTimer != nil {
				s.sentTimer.Stop()
				s.sentTimer = nil
			}
			s.log.committed()
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
		found, err := tx.Get(BucketOutbox, brain.U64(id), &e)
		if err != nil || !found {
			return err
		}
		e.Msg = m
		return tx.Put(BucketOutbox, brain.U64(id), e)
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
			if err := loadVoice(tx, &e); err != nil {
				return fmt.Errorf("load outbox entry %d's audio: %w", e.ID, err)
			}
			out = append(out, e)
			return nil
		})
	})
	return out, err
}
