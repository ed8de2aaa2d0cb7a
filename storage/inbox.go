package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

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
// It returns the signals recorded, which are all of sigs but a reaction, in a chat
// forgotten since Open, to a message the chat's sent ids no longer hold: a channel that
// took it for one to anima's message (Sent) before the chat was forgotten quoted the
// message, which the erasure deleted, and nothing would consume it (the loop holds no
// relationship to carry it).
func (s *Store) Record(source string, sigs []brain.Signal, offset int64) ([]brain.Signal, error) {
	var out []brain.Signal
	err := s.Update(func(tx *Tx) error {
		out = make([]brain.Signal, 0, len(sigs))
		for _, sig := range sigs {
			if sig.Type == brain.SignalReaction {
				ok, err := s.sentSince(tx, sig.Chat, sig.MessageID)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			id, err := tx.Record(sig)
			if err != nil {
				return err
			}
			sig.ID = id
			out = append(out, sig)
		}
		if offset <= 0 {
			return nil
		}
		return tx.PutRaw(BucketMeta, offsetKey(source), brain.U64(uint64(offset)))
	})
	if err != nil {
		return nil, fmt.Errorf("record %d signals from %s: %w", len(sigs), source, err)
	}
	return out, nil
}

// Record stores sig in the inbox under a fresh ID, which it returns (sig.ID is ignored).
// A signal recorded inside a turn's transaction (a fired schedule item) is there if and
// only if the rest of the transaction commits.
func (t *Tx) Record(sig brain.Signal) (uint64, error) {
	id, err := t.NextSeq(BucketInbox)
	if err != nil {
		return 0, err
	}
	sig.ID = id
	if err := t.Put(BucketInbox, brain.U64(id), sig); err != nil {
		return 0, err
	}
	return id, nil
}

// Pending returns the inbox: recorded signals not yet consumed by a committed turn, in
// the order they were recorded.
func (s *Store) Pending() ([]brain.Signal, error) {
	var sigs []brain.Signal
	err := s.View(func(tx *Tx) error {
		var err error
		sigs, err = ReadInbox(tx)
		return err
	})
	return sigs, err
}

// Scanner walks the keys of a bucket with a prefix in key order (Tx.Scan).
type Scanner interface {
	Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error
}

// ReadInbox decodes the inbox read through tx (a *Tx, or a memory-only store's), in the
// order it was recorded.
func ReadInbox(tx Scanner) ([]brain.Signal, error) {
	return decodeAll[brain.Signal](tx, BucketInbox, "inbox entry")
}

// decodeAll decodes every value of bucket read through tx, in key order; what names a
// value in the error. On an error it returns the values decoded before it.
func decodeAll[T any](tx Scanner, bucket, what string) ([]T, error) {
	var out []T
	err := tx.Scan(bucket, nil, func(_, v []byte) error {
		var x T
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("decode %s: %w", what, err)
		}
		out = append(out, x)
		return nil
	})
	return out, err
}

// viewAll is decodeAll in a read transaction of its own.
func viewAll[T any](s *Store, bucket, what string) ([]T, error) {
	var out []T
	err := s.View(func(tx *Tx) (err error) {
		out, err = decodeAll[T](tx, bucket, what)
		return err
	})
	return out, err
}
