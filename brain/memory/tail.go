package memory

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/anima-bot/anima/brain"
)

// tailDoc is an unfolded turn: its Seq, length in terms and term counts.
type tailDoc struct {
	seq uint64
	dl  uint64
	tf  map[string]uint64
}

// scanTail calls fn with chat's unfolded turns (marked history entries after through),
// oldest first. want, when not nil, limits the counts kept to those terms. fn returns
// brain.ErrStop to end early.
func scanTail(tx Tx, tok tokenizer, chat int64, through uint64, want map[string]bool, fn func(d tailDoc) error) error {
	return tx.HistoryFrom(chat, through+1, func(k, v []byte) error {
		if len(k) != 16 {
			return nil
		}
		t, marked, err := brain.DecodeHistory(v)
		if err != nil || !marked {
			return err
		}
		d := tailDoc{seq: binary.BigEndian.Uint64(k[8:]), tf: map[string]uint64{}}
		terms := tok.terms(tok.indexedText(t), maxDocTerms)
		d.dl = uint64(len(terms))
		for _, term := range terms {
			if want == nil || want[term] {
				d.tf[term]++
			}
		}
		return fn(d)
	})
}

// indexedText is what of t the index holds: its text, after who said it — the writer's
// name for a user turn whose writer is known, anima's own (tok.self) for its turns — since
// a question names whom it is about: "When did Maria join a gym?" finds Maria's "I joined
// a gym last week!" over another's "Yeah, Maria!".
func (tok tokenizer) indexedText(t brain.Turn) string {
	switch {
	case t.Role == "user" && t.Name != "":
		return brain.CleanName(t.Name) + ": " + t.Text
	case t.Role == "assistant" && tok.self != "":
		return tok.self + ": " + t.Text
	}
	return t.Text
}

// tailLen counts chat's history entries after through, marked or not, up to limit
// (keys only: it decodes nothing).
func tailLen(tx Tx, chat int64, through uint64, limit int) (int, error) {
	n := 0
	err := tx.HistoryFrom(chat, through+1, func(_, _ []byte) error {
		n++
		if n >= limit {
			return brain.ErrStop
		}
		return nil
	})
	return n, err
}

// indexedThrough is the highest history Seq of chat in the index, folded or not: the
// newest marked history entry, or the folded high-water mark.
func indexedThrough(tx Tx, chat int64, st indexStats) (uint64, error) {
	through := st.Through
	err := tx.HistoryReverse(chat, func(k, v []byte) error {
		seq := historySeq(k)
		if seq <= st.Through {
			return brain.ErrStop
		}
		_, marked, err := brain.DecodeHistory(v)
		if err != nil {
			return err
		}
		if marked {
			through = seq
			return brain.ErrStop
		}
		return nil
	})
	return through, err
}

// historySeq is the Seq a history key ends in.
func historySeq(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-8:]) }

// turnsAfter is chat's history after Seq through, newest first.
func turnsAfter(tx Tx, chat int64, through uint64) ([]brain.Turn, error) {
	var out []brain.Turn
	err := tx.HistoryReverse(chat, func(k, v []byte) error {
		seq := historySeq(k)
		if seq <= through {
			return brain.ErrStop
		}
		var t brain.Turn
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decode history entry: %w", err)
		}
		t.Seq = seq
		out = append(out, t)
		return nil
	})
	return out, err
}
