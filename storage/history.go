package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
)

// History is kept in epochs: buckets of EpochTurns consecutive Seqs each. A turn's commit
// writes the path from its epoch's root to the leaf, and a B+tree's depth grows with what
// it holds: one tree for all of history was four levels deep from about 12,000 messages
// on (fifty chats appending in fifty places leave bbolt's branch pages a third full), and
// its path alone then cost a commit 16 KB. An epoch holds at most EpochTurns, so the
// path stays at three pages however long anima lives. Closed epochs are only read, and
// written again when something is deleted (/forget).
//
// The first epoch is the bucket BucketHistory (Seqs from 1); each later one is named
// "history/" and its first Seq in 16 hex digits, so the buckets sort in Seq order. Keys
// are chat | seq in every epoch, and the current epoch's bucket sequence is the next
// Seq. Readers go through the History* methods, which walk the epochs in order.
const EpochTurns = 16384

const epochPrefix = BucketHistory + "/"

// epoch is one history bucket and the first Seq it holds.
type epoch struct {
	name  string
	start uint64
}

// epochs lists the history buckets in Seq order (cached for the transaction).
func (t *Tx) epochs() []epoch {
	if t.eps != nil {
		return t.eps
	}
	eps := []epoch{{name: BucketHistory}}
	c := t.tx.Cursor()
	for k, _ := c.Seek([]byte(epochPrefix)); k != nil && bytes.HasPrefix(k, []byte(epochPrefix)); k, _ = c.Next() {
		start, err := strconv.ParseUint(string(k[len(epochPrefix):]), 16, 64)
		if err != nil {
			continue // not an epoch
		}
		eps = append(eps, epoch{name: string(k), start: start})
	}
	t.eps = eps
	return eps
}

// epochOf is the index in eps of the epoch holding seq.
func epochOf(eps []epoch, seq uint64) int {
	i, found := slices.BinarySearchFunc(eps, seq, func(e epoch, s uint64) int {
		switch {
		case e.start < s:
			return -1
		case e.start > s:
			return 1
		}
		return 0
	})
	if found {
		return i
	}
	return max(i-1, 0)
}

func epochName(start uint64) string { return fmt.Sprintf("%s%016x", epochPrefix, start) }

// appendHistory adds turns to chat's history in the current epoch, opening a new one
// when the current holds EpochTurns.
func (t *Tx) appendHistory(chat int64, turns []brain.Turn) error {
	for _, turn := range turns {
		eps := t.epochs()
		cur := eps[len(eps)-1]
		b, err := t.bucket(cur.name)
		if err != nil {
			return err
		}
		if b.Sequence()+1 < cur.start { // a sequence behind its epoch's name: never reuse a Seq
			if err := b.SetSequence(cur.start - 1); err != nil {
				return err
			}
		}
		if next := b.Sequence() + 1; next-max(cur.start, 1) >= t.epochTurns {
			if b, err = t.tx.CreateBucket([]byte(epochName(next))); err != nil {
				return fmt.Errorf("open history epoch at %d: %w", next, err)
			}
			if err := b.SetSequence(next - 1); err != nil {
				return err
			}
			b.FillPercent = appendFill
			t.eps = nil
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		turn.Seq = seq
		data, err := json.Marshal(turn)
		if err != nil {
			return fmt.Errorf("encode history entry: %w", err)
		}
		if err := b.Put(brain.Key(chat, brain.U64(seq)), data); err != nil {
			return err
		}
	}
	return nil
}

// historyEntry returns the bucket of chat's entry seq, and its key.
func (t *Tx) historyEntry(chat int64, seq uint64) (*bolt.Bucket, []byte, error) {
	eps := t.epochs()
	b, err := t.bucket(eps[epochOf(eps, seq)].name)
	return b, brain.Key(chat, brain.U64(seq)), err
}

// HistoryRaw returns a copy of chat's history entry seq (nil if absent).
func (t *Tx) HistoryRaw(chat int64, seq uint64) ([]byte, error) {
	b, k, err := t.historyEntry(chat, seq)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b.Get(k)), nil
}

// HistoryGet decodes chat's history entry seq into v and reports whether it was there.
func (t *Tx) HistoryGet(chat int64, seq uint64, v any) (bool, error) {
	b, k, err := t.historyEntry(chat, seq)
	if err != nil {
		return false, err
	}
	found, err := decode(b.Get(k), v)
	if err != nil {
		return true, fmt.Errorf("decode history entry %d of chat %d: %w", seq, chat, err)
	}
	return found, nil
}

// HistoryFrom calls fn with chat's history entries from Seq from on, oldest first: k is
// chat | seq. k and v are valid only during the call. fn returns brain.ErrStop to end
// early.
func (t *Tx) HistoryFrom(chat int64, from uint64, fn func(k, v []byte) error) error {
	eps := t.epochs()
	prefix, seek := brain.ID64(chat), brain.Key(chat, brain.U64(from))
	return t.walkEpochs(eps[epochOf(eps, from):], false, func(b *bolt.Bucket) error { return scanFrom(b, prefix, seek, fn) })
}

// HistoryReverse calls fn with chat's history entries, newest first; as HistoryFrom.
func (t *Tx) HistoryReverse(chat int64, fn func(k, v []byte) error) error {
	prefix := brain.ID64(chat)
	return t.walkEpochs(t.epochs(), true, func(b *bolt.Bucket) error { return scanReverse(b, prefix, fn) })
}

// HistoryEach calls fn with every chat's history entries, epoch by epoch.
func (t *Tx) HistoryEach(fn func(k, v []byte) error) error {
	return t.walkEpochs(t.epochs(), false, func(b *bolt.Bucket) error { return b.ForEach(fn) })
}

// walkEpochs calls walk with the bucket of each of eps in turn, newest first when
// reverse, until an error; brain.ErrStop from walk ends the walk without one.
func (t *Tx) walkEpochs(eps []epoch, reverse bool, walk func(b *bolt.Bucket) error) error {
	for i := range eps {
		e := eps[i]
		if reverse {
			e = eps[len(eps)-1-i]
		}
		b, err := t.bucket(e.name)
		if err != nil {
			return err
		}
		if err := walk(b); err != nil {
			return stopped(err)
		}
	}
	return nil
}

// HistoryDelete removes chat's history entry seq.
func (t *Tx) HistoryDelete(chat int64, seq uint64) error {
	b, k, err := t.historyEntry(chat, seq)
	if err != nil {
		return err
	}
	if b.Get(k) != nil {
		t.deleted++
	}
	return b.Delete(k)
}

// deleteHistoryChat removes every history entry of chat, in every epoch.
func (t *Tx) deleteHistoryChat(chat int64) error {
	for _, e := range t.epochs() {
		if _, err := t.DeletePrefix(e.name, brain.ID64(chat)); err != nil {
			return err
		}
	}
	return nil
}

// History returns up to n of chat's most recent turns, oldest first (n ≤ 0: all).
func (s *Store) History(chat int64, n int) ([]brain.Turn, error) {
	var turns []brain.Turn
	err := s.View(func(tx *Tx) error {
		var err error
		turns, err = ReadHistory(tx, chat, n)
		return err
	})
	return turns, err
}

// HistoryReverser walks a chat's history newest first (Tx.HistoryReverse).
type HistoryReverser interface {
	HistoryReverse(chat int64, fn func(k, v []byte) error) error
}

// ReadHistory returns up to n of chat's most recent turns read through tx (a *Tx, or a
// memory-only store's), oldest first (n ≤ 0: all). On an error it returns the turns read
// before it.
func ReadHistory(tx HistoryReverser, chat int64, n int) ([]brain.Turn, error) {
	var turns []brain.Turn
	err := tx.HistoryReverse(chat, func(_, v []byte) error {
		var t brain.Turn
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decode history entry: %w", err)
		}
		turns = append(turns, t)
		if n > 0 && len(turns) >= n {
			return brain.ErrStop
		}
		return nil
	})
	slices.Reverse(turns)
	return turns, err
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
	var e brain.IndexedTurn
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
