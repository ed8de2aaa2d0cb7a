package storagetest

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// History is kept as storage keeps it, in one epoch: BucketHistory, key chat | seq, Seq
// from the bucket's sequence (shared by all chats), the value the turn as JSON with
// memory's mark (brain.DecodeHistory).

// AppendHistory adds turns to chat's history, as storage.Store.CommitTurn does, and
// returns them with their Seqs.
func (t *Tx) AppendHistory(chat int64, turns ...brain.Turn) ([]brain.Turn, error) {
	out := slices.Clone(turns)
	for i := range out {
		seq, err := t.NextSeq(storage.BucketHistory)
		if err != nil {
			return nil, err
		}
		out[i].Seq = seq
		if err := t.Put(storage.BucketHistory, brain.Key(chat, brain.U64(seq)), out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// HistoryRaw returns a copy of chat's history entry seq (nil if absent).
func (t *Tx) HistoryRaw(chat int64, seq uint64) ([]byte, error) {
	return t.GetRaw(storage.BucketHistory, brain.Key(chat, brain.U64(seq)))
}

// HistoryGet decodes chat's history entry seq into v and reports whether it was there.
func (t *Tx) HistoryGet(chat int64, seq uint64, v any) (bool, error) {
	return t.Get(storage.BucketHistory, brain.Key(chat, brain.U64(seq)), v)
}

// HistoryFrom calls fn with chat's history entries from Seq from on, oldest first: k is
// chat | seq. fn returns brain.ErrStop to end early.
func (t *Tx) HistoryFrom(chat int64, from uint64, fn func(k, v []byte) error) error {
	b := t.read(storage.BucketHistory)
	start := string(brain.Key(chat, brain.U64(from)))
	for _, k := range t.historyKeys(chat) {
		if k < start {
			continue
		}
		if err := fn([]byte(k), b[k]); err != nil {
			return stopped(err)
		}
	}
	return nil
}

// HistoryReverse calls fn with chat's history entries, newest first; as HistoryFrom.
func (t *Tx) HistoryReverse(chat int64, fn func(k, v []byte) error) error {
	b := t.read(storage.BucketHistory)
	keys := t.historyKeys(chat)
	for _, k := range slices.Backward(keys) {
		if err := fn([]byte(k), b[k]); err != nil {
			return stopped(err)
		}
	}
	return nil
}

// MarkIndexed marks chat's history entry seq as indexed (brain.DecodeHistory reads the
// mark) and reports whether the entry exists and was not marked before.
func (t *Tx) MarkIndexed(chat int64, seq uint64) (bool, error) {
	k := brain.Key(chat, brain.U64(seq))
	v := t.read(storage.BucketHistory).Get(k)
	if v == nil {
		return false, nil
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal(v, &e); err != nil {
		return false, fmt.Errorf("decode history entry: %w", err)
	}
	if _, marked := e["ix"]; marked {
		return false, nil
	}
	e["ix"] = json.RawMessage("true")
	return true, t.Put(storage.BucketHistory, k, e)
}

// History returns up to n of chat's most recent turns, oldest first (n ≤ 0: all).
func (s *Store) History(chat int64, n int) ([]brain.Turn, error) {
	var turns []brain.Turn
	err := s.View(func(tx *Tx) error {
		var err error
		turns, err = storage.ReadHistory(tx, chat, n)
		return err
	})
	return turns, err
}
