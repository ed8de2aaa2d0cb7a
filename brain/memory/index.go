package memory

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/anima-bot/anima/brain"
)

// The search index lives in brain.BucketIndex, every key prefixed with the chat id:
//
//	chat 'f'             → a fence (one byte)
//	chat 'g' segment id  → a blob: the postings of a run of folded turns (see segment.go)
//	chat 'h'             → a fence (one byte)
//	chat 's'             → indexStats (JSON): folded totals, segments, high-water mark
//
// bbolt puts at least two keys in a page and rewrites the whole page (a large value's
// included) when any of its keys changes. So segments, large and written once, are blobs
// (storage.Tx.PutBlob: a bucket each), and a new segment copies none of the others; the
// fences keep the stats, which every fold rewrites, off the pages of segments a store
// written before blobs still holds as plain values.
//
// Turns not yet folded (the tail) have no key of their own: the turn's commit marks its
// history entry indexed (storage.Tx.MarkIndexed), on the page the commit writes anyway,
// so indexing a turn costs the commit no page of the index. The text lives only in
// history; the index refers to turns by their Seq. The tail is the chat's marked history
// entries after the stats' Through, read and tokenized (tokenize.go) when searched
// (tail.go). The upkeep after turns (Maintain → fold) moves the tail into a new segment
// once foldMin turns have gathered, and merges the last mergeWidth segments of one size
// tier into one, so a chat has a few dozen segments at most and every turn's postings are
// rewritten a handful of times in its life. A search that finds more than foldMax turns
// unfolded (a chat migrated from an older schema) folds them first. Facts and the summary
// are few and change in place, so Search scores them on the fly instead of indexing them.
const (
	tagStats     = 's'
	tagSegment   = 'g'
	tagFenceLow  = 'f'
	tagFenceHigh = 'h'
)

// fence writes chat's fences around its segments if they are not there yet.
func fence(tx Tx, chat int64) error {
	for _, tag := range []byte{tagFenceLow, tagFenceHigh} {
		k := brain.Key(chat, []byte{tag})
		v, err := tx.Peek(brain.BucketIndex, k)
		if err != nil || v != nil {
			if err != nil {
				return err
			}
			continue
		}
		if err := tx.PutRaw(brain.BucketIndex, k, []byte{1}); err != nil {
			return err
		}
	}
	return nil
}

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

const (
	maxTermBytes   = 32
	maxDocTerms    = 2000
	maxDocRunes    = 4000
	maxQueryTerms  = 32
	defaultLimit   = 5
	maxSearchLimit = 50
)

// Folding and merging.
const (
	// foldMin is how many unfolded turns a chat gathers before Maintain folds them.
	foldMin = 64
	// foldMax bounds the turns folded in one transaction (a long backlog takes several).
	foldMax = 4096
	// mergeWidth segments of one tier merge into one of the next.
	mergeWidth = 4
	// maxSegDocs bounds a merged segment (so a merge's transaction stays short).
	maxSegDocs = 16384
)

// Hit sources.
const (
	sourceTurn    = "turn"
	sourceSummary = "summary"
	sourceFact    = "fact"
)

type indexStats struct {
	// Docs and TotalLen count the folded turns (the tail is counted when read).
	Docs     uint64 `json:"docs"`
	TotalLen uint64 `json:"total_len"`
	// Through is the highest history Seq folded (the tail's keys go further).
	Through uint64    `json:"through_seq"`
	Segs    []segMeta `json:"segs,omitempty"`
	NextSeg uint64    `json:"next_seg,omitempty"`
	// Terms is the id of the tokenizer whose terms the segments hold ("" before
	// termsVersion 2): segments of another are rebuilt (fold.go).
	Terms string `json:"terms,omitempty"`
}

type segMeta struct {
	ID   uint64 `json:"id"`
	Docs int    `json:"docs"`
}

func statsKey(chat int64) []byte { return brain.Key(chat, []byte{tagStats}) }

func segKey(chat int64, id uint64) []byte {
	return brain.Key(chat, []byte{tagSegment}, brain.U64(id))
}

func loadStats(tx Tx, chat int64) (indexStats, error) {
	var s indexStats
	if _, err := tx.Get(brain.BucketIndex, statsKey(chat), &s); err != nil {
		return indexStats{}, fmt.Errorf("read index stats of chat %d: %w", chat, err)
	}
	return s, nil
}

// IndexTx adds turns of chat to the search index inside tx, so that history and index
// are committed together (use it as storage.Commit.Also): it marks their history
// entries. Turns without a Seq take the Seq of the chat's latest history entries in tx
// when those match them, as they do when CommitTurn wrote them earlier in the same
// transaction; turns that match none are not indexed (the index refers to history for
// the text). Turns already indexed (marked, or folded: Seq at or below the folded
// high-water mark) are skipped. Errors are the store's.
func (m *Memory) IndexTx(tx Tx, chat int64, turns []brain.Turn) error {
	if len(turns) == 0 {
		return nil
	}
	if err := indexTx(tx, chat, withSeqs(tx, chat, turns)); err != nil {
		return fmt.Errorf("index %d turns of chat %d: %w", len(turns), chat, err)
	}
	return nil
}

// withSeqs fills in missing Seqs from the chat's last len(turns) history entries when
// their texts match in order.
func withSeqs(tx Tx, chat int64, turns []brain.Turn) []brain.Turn {
	missing := false
	for _, t := range turns {
		missing = missing || t.Seq == 0
	}
	if !missing {
		return turns
	}
	last := make([]brain.Turn, 0, len(turns))
	err := tx.HistoryReverse(chat, func(k, v []byte) error {
		var t brain.Turn
		if err := json.Unmarshal(v, &t); err != nil {
			return err
		}
		t.Seq = historySeq(k)
		last = append(last, t)
		if len(last) == len(turns) {
			return brain.ErrStop
		}
		return nil
	})
	if err != nil || len(last) != len(turns) {
		return turns
	}
	slices.Reverse(last)
	out := make([]brain.Turn, len(turns))
	for i, t := range turns {
		if t.Seq == 0 && last[i].Text != t.Text {
			return turns
		}
		out[i] = t
		if t.Seq == 0 {
			out[i].Seq = last[i].Seq
		}
	}
	return out
}

func indexTx(tx Tx, chat int64, turns []brain.Turn) error {
	st, err := loadStats(tx, chat)
	if err != nil {
		return err
	}
	for _, t := range turns {
		if t.Seq == 0 || t.Seq <= st.Through {
			continue
		}
		if _, err := tx.MarkIndexed(chat, t.Seq); err != nil {
			return err
		}
	}
	return nil
}

// Reindex brings chat's search index up to date with its history: it indexes the turns
// after the index's high-water mark (all of them when there is no index yet), in one
// transaction, then folds them. It returns how many turns it looked at.
func (m *Memory) Reindex(chat int64) (int, error) {
	var n int
	err := m.st.Update(func(tx Tx) error {
		st, err := loadStats(tx, chat)
		if err != nil {
			return err
		}
		through, err := indexedThrough(tx, chat, st)
		if err != nil {
			return err
		}
		behind, err := turnsAfter(tx, chat, through)
		if err != nil {
			return err
		}
		slices.Reverse(behind)
		n = len(behind)
		if n == 0 {
			return nil
		}
		return indexTx(tx, chat, behind)
	})
	if err != nil {
		return n, fmt.Errorf("reindex chat %d: %w", chat, err)
	}
	if err := m.foldAll(chat); err != nil {
		return n, err
	}
	return n, nil
}

// UnindexTx removes the turns of chat with the given history Seqs from the search index
// inside tx (storage.Store.ForgetUser): their postings and share
// of the statistics in the segments that hold them (those are rewritten without them),
// and their vectors (vectors.go).
// Errors are the store's.
func (m *Memory) UnindexTx(tx Tx, chat int64, seqs []uint64) error {
	if len(seqs) == 0 {
		return nil
	}
	drop := make(map[uint64]bool, len(seqs))
	for _, s := range seqs {
		drop[s] = true // unfolded ones go with their history entries
	}
	if err := unindexVectors(tx, chat, drop); err != nil {
		return fmt.Errorf("unindex vectors of chat %d: %w", chat, err)
	}
	st, err := loadStats(tx, chat)
	if err != nil {
		return err
	}
	changed := false
	segs := st.Segs[:0:0]
	for _, sm := range st.Segs {
		v, err := tx.PeekBlob(brain.BucketIndex, segKey(chat, sm.ID))
		if err != nil {
			return err
		}
		seg, err := parseSegment(v)
		if err != nil {
			return fmt.Errorf("segment %d of chat %d: %w", sm.ID, chat, err)
		}
		docs, err := seg.docTable()
		if err != nil {
			return fmt.Errorf("segment %d of chat %d: %w", sm.ID, chat, err)
		}
		if !slices.ContainsFunc(docs, func(d segDoc) bool { return drop[d.seq] }) {
			segs = append(segs, sm)
			continue
		}
		changed = true
		for _, d := range docs {
			if drop[d.seq] {
				st.Docs = max(st.Docs, 1) - 1
				st.TotalLen -= min(st.TotalLen, d.dl)
			}
		}
		b := newSegBuilder()
		kept, err := seg.appendTo(b, func(seq uint64) bool { return !drop[seq] })
		if err != nil {
			return fmt.Errorf("segment %d of chat %d: %w", sm.ID, chat, err)
		}
		if len(kept) == 0 {
			if err := tx.DeleteBlob(brain.BucketIndex, segKey(chat, sm.ID)); err != nil {
				return err
			}
			continue
		}
		if err := tx.PutBlob(brain.BucketIndex, segKey(chat, sm.ID), b.encode()); err != nil {
			return err
		}
		segs = append(segs, segMeta{ID: sm.ID, Docs: len(kept)})
	}
	if !changed {
		return nil
	}
	st.Segs = segs
	if err := tx.Put(brain.BucketIndex, statsKey(chat), st); err != nil {
		return fmt.Errorf("unindex turns of chat %d: %w", chat, err)
	}
	return nil
}
