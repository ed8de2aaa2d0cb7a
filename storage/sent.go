package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/anima-bot/anima/brain"
)

// SentKeep is how many of its latest message ids per chat the store remembers anima sent.
const SentKeep = 500

// RecordSent remembers that anima sent the platform message id in chat, forgetting the
// chat's oldest beyond SentKeep. Sent sees the id at once; the store writes ids in
// batches riding on its next commit, instead of a synced commit per message, which
// would cost more than the message's turn: a chat's ids once sentBatch of them have
// gathered, everyone's once sentFlushAll wait in all, and all at Close. A batch rewrites
// the chat's list, so writing a chat at a time keeps each batch to a page or two. A
// crash forgets at most the last sentBatch-1 ids of a chat (sentFlushAll-1 in all), and
// reactions to those few messages are ignored.
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

// sentBatch is how many of a chat's sent ids (RecordSent) gather before a commit writes
// them; sentFlushAll, how many of all chats' before a commit writes every chat's.
const (
	sentBatch    = 32
	sentFlushAll = 256
)

// recordSentTx appends ids to chat's list of sent ids in tx, keeping the latest SentKeep.
// A chat's ids are one value (see encodeSent), so a batch writes one value per chat it
// touches rather than a key per id and the deletion of as many old ones.
func recordSentTx(tx *Tx, chat int64, ids []int) error {
	old, err := tx.Peek(BucketSent, brain.ID64(chat))
	if err != nil {
		return err
	}
	list, err := decodeSent(old)
	if err != nil {
		return fmt.Errorf("sent ids of chat %d: %w", chat, err)
	}
	list = append(list, ids...)
	list = list[max(len(list)-SentKeep, 0):]
	return tx.PutRaw(BucketSent, brain.ID64(chat), encodeSent(list))
}

// A chat's sent ids are stored oldest first as zigzag varint deltas from the previous id
// (the first from 0): Telegram's message ids grow within a chat, so most take a byte.
func encodeSent(ids []int) []byte {
	out := make([]byte, 0, len(ids)+8)
	prev := 0
	for _, id := range ids {
		out = binary.AppendVarint(out, int64(id-prev))
		prev = id
	}
	return out
}

func decodeSent(v []byte) ([]int, error) {
	var ids []int
	prev := 0
	for len(v) > 0 {
		d, n := binary.Varint(v)
		if n <= 0 {
			return nil, errors.New("corrupt sent id list")
		}
		prev += int(d)
		ids = append(ids, prev)
		v = v[n:]
	}
	return ids, nil
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
	var stored []int
	err := s.View(func(tx *Tx) error {
		v, err := tx.Peek(BucketSent, brain.ID64(chat))
		if err != nil {
			return err
		}
		stored, err = decodeSent(v)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("look up sent message %d of chat %d: %w", id, chat, err)
	}
	i := slices.Index(stored, id)
	found := i >= 0
	newer := len(stored) - 1 - i + len(waiting) // ids sent after id: stored, then waiting
	return found && newer < SentKeep, nil
}

// sentSince reports, inside tx, whether message id of chat may still be taken as one
// anima sent: in a chat not forgotten since Open, always (the channel has checked Sent);
// in a forgotten one, only while its sent ids, waiting or stored, hold it. The
// transaction orders the look with ForgetUser's, which deletes both.
func (s *Store) sentSince(tx *Tx, chat int64, id int) (bool, error) {
	s.sentMu.Lock()
	forgotten := s.forgotten[chat]
	waiting := forgotten && slices.Contains(s.sentIDs[chat], id)
	s.sentMu.Unlock()
	if !forgotten || waiting {
		return true, nil
	}
	v, err := tx.Peek(BucketSent, brain.ID64(chat))
	if err != nil {
		return false, err
	}
	stored, err := decodeSent(v)
	if err != nil {
		return false, fmt.Errorf("sent ids of chat %d: %w", chat, err)
	}
	return slices.Contains(stored, id), nil
}
