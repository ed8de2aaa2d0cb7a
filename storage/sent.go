package storage

import (
	"bytes"
	"fmt"
)

// SentKeep is how many of its latest message ids per chat the store remembers anima sent.
const SentKeep = 500

// RecordSent remembers that anima sent the platform message id in chat, forgetting the
// chat's oldest beyond SentKeep. Errors are the store's.
func (s *Store) RecordSent(chat int64, id int) error {
	err := s.Update(func(tx *Tx) error {
		if err := tx.PutRaw(BucketSent, Key(chat, U64(uint64(id))), []byte{1}); err != nil {
			return err
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
	})
	if err != nil {
		return fmt.Errorf("record sent message %d of chat %d: %w", id, chat, err)
	}
	return nil
}

// Sent reports whether anima sent the message id in chat (among the chat's last
// SentKeep). Errors are the store's.
func (s *Store) Sent(chat int64, id int) (bool, error) {
	var found bool
	err := s.View(func(tx *Tx) error {
		v, err := tx.GetRaw(BucketSent, Key(chat, U64(uint64(id))))
		found = v != nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("look up sent message %d of chat %d: %w", id, chat, err)
	}
	return found, nil
}
