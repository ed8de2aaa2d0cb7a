package memory

import (
	"fmt"

	"github.com/anima-bot/anima/brain"
)

// foldAll folds chat's unfolded turns into segments, foldMax turns a transaction, while
// at least foldMin have gathered; it merges segments as they fill a tier. It runs in the
// upkeep after a turn (Maintain), off the turn's commit.
func (m *Memory) foldAll(chat int64) error {
	// Most upkeeps find fewer than foldMin turns after the fold point: a look at their
	// keys tells, and spares the store an empty synced commit.
	var n int
	var old bool
	err := m.st.View(func(tx Tx) error {
		st, err := loadStats(tx, chat)
		if err != nil {
			return err
		}
		old = stale(st, m.tok)
		n, err = tailLen(tx, chat, st.Through, foldMin)
		return err
	})
	if err != nil {
		return fmt.Errorf("fold index of chat %d: %w", chat, err)
	}
	if n < foldMin && !old {
		return nil
	}
	for {
		var more bool
		err := m.st.Update(func(tx Tx) error {
			var err error
			more, err = fold(tx, m.tok, chat)
			return err
		})
		if err != nil {
			return fmt.Errorf("fold index of chat %d: %w", chat, err)
		}
		if !more {
			return nil
		}
	}
}

// fold moves up to foldMax of chat's oldest unfolded turns into a new segment when at
// least foldMin have gathered, then merges segments. more reports that a full batch was
// folded (there may be another). An index built with other terms than tok's is dropped
// first (rebuild): its turns keep their marks in history, so they all become the tail
// and are folded again, none lost.
func fold(tx Tx, tok tokenizer, chat int64) (more bool, err error) {
	st, err := loadStats(tx, chat)
	if err != nil {
		return false, err
	}
	if stale(st, tok) {
		if st, err = rebuild(tx, chat, st, tok); err != nil {
			return false, err
		}
	}
	var tail []tailDoc
	err = scanTail(tx, tok, chat, st.Through, nil, func(d tailDoc) error {
		tail = append(tail, d)
		if len(tail) == foldMax {
			return brain.ErrStop
		}
		return nil
	})
	if err != nil || len(tail) < foldMin {
		return false, err
	}
	st.Terms = tok.id
	if err := fence(tx, chat); err != nil {
		return false, err
	}
	b := newSegBuilder()
	for _, d := range tail {
		st.Through = max(st.Through, d.seq)
		if d.dl == 0 {
			continue
		}
		b.add(d.seq, d.dl, d.tf)
		st.Docs++
		st.TotalLen += d.dl
	}
	if len(b.docs) > 0 {
		st.NextSeg++
		if err := tx.PutBlob(brain.BucketIndex, segKey(chat, st.NextSeg), b.encode()); err != nil {
			return false, err
		}
		st.Segs = append(st.Segs, segMeta{ID: st.NextSeg, Docs: len(b.docs)})
	}
	if err := merge(tx, chat, &st); err != nil {
		return false, err
	}
	if err := tx.Put(brain.BucketIndex, statsKey(chat), st); err != nil {
		return false, err
	}
	return len(tail) == foldMax, nil
}

// stale reports whether st's segments hold other terms than tok makes (an index built
// before termsVersion, or for another language).
func stale(st indexStats, tok tokenizer) bool { return st.Terms != tok.id && len(st.Segs) > 0 }

// rebuild drops chat's segments and starts its stats afresh for tok: every marked turn
// of its history is then unfolded, to be folded with tok's terms. It returns the new stats,
// written.
func rebuild(tx Tx, chat int64, st indexStats, tok tokenizer) (indexStats, error) {
	for _, s := range st.Segs {
		if err := tx.DeleteBlob(brain.BucketIndex, segKey(chat, s.ID)); err != nil {
			return st, fmt.Errorf("rebuild index of chat %d: %w", chat, err)
		}
	}
	st = indexStats{NextSeg: st.NextSeg, Terms: tok.id}
	if err := tx.Put(brain.BucketIndex, statsKey(chat), st); err != nil {
		return st, fmt.Errorf("rebuild index of chat %d: %w", chat, err)
	}
	return st, nil
}

// tier is a segment's size class: 0 below 4·foldMin turns, then one more for every
// factor of mergeWidth.
func tier(docs int) int {
	t := 0
	for d := docs; d >= foldMin*mergeWidth; d /= mergeWidth {
		t++
	}
	return t
}

// merge replaces the last mergeWidth segments with one while they share a tier and
// together stay within maxSegDocs.
func merge(tx Tx, chat int64, st *indexStats) error {
	for len(st.Segs) >= mergeWidth {
		last := st.Segs[len(st.Segs)-mergeWidth:]
		sum, t := 0, tier(last[0].Docs)
		same := true
		for _, s := range last {
			sum += s.Docs
			same = same && tier(s.Docs) == t
		}
		if !same || sum > maxSegDocs {
			return nil
		}
		b := newSegBuilder()
		for _, s := range last {
			v, err := tx.PeekBlob(brain.BucketIndex, segKey(chat, s.ID))
			if err != nil {
				return err
			}
			seg, err := parseSegment(v)
			if err != nil {
				return fmt.Errorf("segment %d of chat %d: %w", s.ID, chat, err)
			}
			if _, err := seg.appendTo(b, nil); err != nil {
				return fmt.Errorf("segment %d of chat %d: %w", s.ID, chat, err)
			}
		}
		for _, s := range last {
			if err := tx.DeleteBlob(brain.BucketIndex, segKey(chat, s.ID)); err != nil {
				return err
			}
		}
		st.NextSeg++
		if err := tx.PutBlob(brain.BucketIndex, segKey(chat, st.NextSeg), b.encode()); err != nil {
			return err
		}
		st.Segs = append(st.Segs[:len(st.Segs)-mergeWidth], segMeta{ID: st.NextSeg, Docs: len(b.docs)})
	}
	return nil
}
