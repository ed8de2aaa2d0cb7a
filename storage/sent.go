package storage

import (
	"bytes"
	"fmt"
	"slices"
)

// SentKeep is how many of its latest message ids per chat the store remembers anima sent.
const SentKeep = 500

// RecordSent remembers that anima sent the platform message id in chat, forgetting the
// chat's oldest beyond SentKeep. Sent sees the id at once; the store writes ids in
// batches, riding on its next commit once sentBatch have gathered (and at Close), instead
// of a synced commit per message, which would cost more than the message's turn: a crash
// forgets at most the last sentBatch-1 ids, and reactions to those few messages are
// ignored.
func (s *Store) RecordSent(chat int64, id int) error {
	if s.sentDelay < 0 {
		if err := s.Update(func(tx *Tx) error { return recordSentTx(tx, chat, []int{id}) }); err != nil {
			return fmt.Errorf("record sent message %d of chat %d: %w", id, chat, err)
		}
		return nil
	}
	s.sentMu.Lock()
	defer s.sentMu.Unlock()
	s.sentIDs[chat] = append(s.sentIDs[chat], id)
	s.sentIDsN++
	return nil
}

// sentBatch is how many sent ids (RecordSent) gather before a commit writes them.
const sentBatch = 32

// recordSentTx stores chat's sent ids in tx and trims the chat to its latest SentKeep.
func recordSentTx(tx *Tx, chat int64, ids []int) error {
	for _, id := range ids {
		if err := tx.PutRaw(BucketSent, Key(chat, U64(uint64(id))), []byte{1}); err != nil {
			return err
		}
	}
	var keys [][]byte
	if err := tx.Scan(BucketSent, ID64(chat), func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	// Ids grow within a chat: the first keys are the oldest.
	for _, k := range keys[:max(len(keys)-SentKeep, 0)] {
		if err := tx.Delete(BucketSent, k); err != nil {
			return err
		}
	}
	return nil
}

// Sent reports whether anima sent the message id in chat (among the chat's last
// SentKeep). Errors are the store's.
func (s *Store) Sent(chat int64, id int) (bool, error) {
	s.sentMu.Lock()
	waiting := slices.Clone(s.sentIDs[chat])
	s.sentMu.Unlock()
	if i := slices.Index(waiting, id); i >= 0 {
		return len(waiting)-1-i < SentKeep, nil
	}
	newer := 0 // ids after id among those waiting, then stored
	for _, w := range waiting {
		if w > id {
			newer++
		}
	}
	var found bool
	err := s.View(func(tx *Tx) error {
		v, err := tx.GetRaw(BucketSent, Key(chat, U64(uint64(id))))
		found = v != nil
		if !found || newer == 0 {
			return err
		}
		return tx.ScanFrom(BucketSent, ID64(chat), Key(chat, U64(uint64(id)+1)), func(_, _ []byte) error {
			if newer++; newer >= SentKeep {
				return ErrStop
			}
			return nil
		})
	})
	if err != nil {
		return false, fmt.Errorf("look up sent message %d of chat %d: %w", id, chat, err)
	}
	return found && newer < SentKeep, nil
}
