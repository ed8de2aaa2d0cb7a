package memory

import (
	"slices"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// What Recall puts in a prompt's memories: the best hits of a search, each with the turn
// before and after it (the answer is often beside the hit: a question next to its answer),
// until the memories' share of the budget is full. Turns that touch are merged into one
// memory, in time order, so a stretch of conversation reads as it was said; memories keep
// the order of their best hit. anima's own first messages are never hits (they would
// bring back its openers, not the person's words), and turns among the recent ones are
// left out (the prompt has them).

const (
	// recallCandidates is how many search results Recall considers past the recent turns.
	recallCandidates = 40
	// neighbours is how many turns on each side of a hit come with it.
	neighbours = 1
)

// window is a run of consecutive turns recalled together.
type window struct {
	turns []brain.Turn
	score float64 // the best hit's in it
}

// recallWindows chooses the turns of hits (best first) and their neighbours within share
// characters and returns them as memories, one per run of consecutive turns, in the order
// of their best hit. recent are the turns the prompt shows anyway. Errors are the store's.
func (m *Memory) recallWindows(chat int64, hits []hit, recent []brain.Turn, share int) ([]brain.Hit, error) {
	if len(hits) == 0 || share <= 0 {
		return nil, nil
	}
	skip := make(map[uint64]bool, len(recent))
	for _, t := range recent {
		if t.Seq != 0 {
			skip[t.Seq] = true
		}
	}
	chosen := map[uint64]brain.Turn{}
	best := map[uint64]float64{}
	err := m.st.View(func(tx Tx) error {
		get := func(seq uint64) (brain.Turn, bool, error) {
			if t, ok := chosen[seq]; ok {
				return t, true, nil
			}
			var t brain.Turn
			ok, err := tx.HistoryGet(chat, seq, &t)
			t.Seq = seq
			return t, ok, err
		}
		for _, h := range hits {
			if share < minPartialTurn+hitOverhead {
				break
			}
			if h.Source != sourceTurn || h.seq == 0 || skip[h.seq] || isOpener(h.kind) {
				continue
			}
			// The hit first, then its neighbours while they fit.
			for d := 0; d <= 2*neighbours; d++ {
				seq := h.seq + uint64((d+1)/2)
				if d%2 == 1 {
					seq = h.seq - uint64((d+1)/2)
				}
				if seq == 0 || skip[seq] {
					continue
				}
				if _, ok := chosen[seq]; ok {
					best[seq] = max(best[seq], h.Score)
					continue
				}
				t, ok, err := get(seq)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				t.Text = truncate(brain.TruncateRunes(t.Text, maxDocRunes), hitTextBytes)
				c := memChars(t)
				if c > share {
					if d == 0 {
						break // not even the hit fits: its neighbours go without it
					}
					continue
				}
				chosen[seq], best[seq] = t, h.Score
				share -= c
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	seqs := make([]uint64, 0, len(chosen))
	for s := range chosen {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	var ws []window
	for i, s := range seqs {
		if i == 0 || s != seqs[i-1]+1 {
			ws = append(ws, window{})
		}
		w := &ws[len(ws)-1]
		w.turns = append(w.turns, chosen[s])
		w.score = max(w.score, best[s])
	}
	slices.SortStableFunc(ws, func(a, b window) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	out := make([]brain.Hit, len(ws))
	for i, w := range ws {
		lines := make([]string, len(w.turns))
		for j, t := range w.turns {
			lines[j] = speaker(t) + ": " + t.Text
		}
		out[i] = brain.Hit{Source: sourceTurn, Text: strings.Join(lines, "\n"), At: w.turns[0].At, Score: w.score}
	}
	return out, nil
}

// isOpener reports whether a turn of kind k is anima's own first message.
func isOpener(k brain.MessageKind) bool { return k == brain.KindProactive || k == brain.KindFollowup }

// memChars is what t weighs among the memories: its line and the overhead of a memory (a
// bound: merged turns share one).
func memChars(t brain.Turn) int { return len(speaker(t)) + 2 + len(t.Text) + hitOverhead }
