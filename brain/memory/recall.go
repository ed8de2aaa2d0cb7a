package memory

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// What Recall puts in a prompt's memories: the best hits of a search, each with the turn
// before and after it (the answer is often beside the hit: a question next to its answer),
// until the memories' share of the budget is full. Turns that touch are merged into one
// memory, in time order, so a stretch of conversation reads as it was said; memories keep
// the order of their best hit. The hits come ranked as the middles of windows (window.go)
// and are reranked (rerank): anima's own first messages weigh less. Turns among the
// recent ones are left out (the prompt has them). The choices were measured on LoCoMo's
// tuning conversations (anima bench memory; docs/memory-bench.md).

const (
	// recallCandidates is how many search results Recall considers past the recent turns.
	recallCandidates = 40
	// openerWeight scales the score of anima's own first message: its words are anima's,
	// not the person's, and a run of "thinking of you" openers would otherwise come back
	// as memories and feed the repetition the prompt avoids elsewhere.
	openerWeight = 0.7
)

// offsets are the turns recalled with a hit, in the order they are taken while the share
// lasts: the hit, the turn before it, the turn after it.
var offsets = [...]int64{0, -1, 1}

// stretch is a run of consecutive turns recalled together.
type stretch struct {
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
	hits = rerank(hits)
	chosen := map[uint64]brain.Turn{}
	best := map[uint64]float64{}
	said := map[string]bool{} // anima's openers recalled: one said again is recalled once
	err := m.st.View(func(tx Tx) error {
		// turn is the turn at seq beside hit h: h's own as search read it, a neighbour
		// read from history.
		turn := func(h hit, seq uint64) (brain.Turn, bool, error) {
			if seq == h.seq {
				return h.turn, true, nil
			}
			var t brain.Turn
			ok, err := tx.HistoryGet(chat, seq, &t)
			t.Seq, t.Text = seq, brain.TruncateRunes(t.Text, maxDocRunes)
			return t, ok, err
		}
		for _, h := range hits {
			if share < minPartialTurn+hitOverhead {
				break
			}
			if h.Source != sourceTurn || h.seq == 0 || skip[h.seq] {
				continue
			}
			// The hit first, then its neighbours while they fit.
			for _, off := range offsets {
				seq := uint64(int64(h.seq) + off)
				if seq == 0 || skip[seq] {
					continue
				}
				if _, ok := chosen[seq]; ok {
					best[seq] = max(best[seq], h.Score)
					continue
				}
				t, ok, err := turn(h, seq)
				if err != nil {
					return err
				}
				if !ok || isOpener(t.Kind) && said[t.Text] {
					continue // an opener anima said again is recalled once
				}
				if isOpener(t.Kind) {
					said[t.Text] = true
				}
				t.Text = truncate(t.Text, hitTextBytes)
				c := len(speaker(t)) + 3 + len(t.Text) // its line
				if _, before := chosen[seq-1]; !before {
					if _, after := chosen[seq+1]; !after {
						c += hitOverhead // a memory of its own (until merged)
					}
				}
				if c > share {
					if off == 0 {
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
	return memoriesOf(chosen, best), nil
}

// memoriesOf turns the chosen turns (by Seq, with the best score of a hit each came with)
// into memories: one per run of consecutive turns, its lines in time order, best first.
func memoriesOf(chosen map[uint64]brain.Turn, best map[uint64]float64) []brain.Hit {
	seqs := make([]uint64, 0, len(chosen))
	for s := range chosen {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	var ws []stretch
	for i, s := range seqs {
		if i == 0 || s != seqs[i-1]+1 {
			ws = append(ws, stretch{})
		}
		w := &ws[len(ws)-1]
		w.turns = append(w.turns, chosen[s])
		w.score = max(w.score, best[s])
	}
	slices.SortStableFunc(ws, func(a, b stretch) int { return cmp.Compare(b.score, a.score) })
	out := make([]brain.Hit, len(ws))
	for i, w := range ws {
		lines := make([]string, len(w.turns))
		var said []time.Time
		for j, t := range w.turns {
			lines[j] = speaker(t) + ": " + t.Text
			if len(w.turns) > 1 {
				said = append(said, t.At)
			}
		}
		out[i] = brain.Hit{Source: sourceTurn, Text: strings.Join(lines, "\n"), At: w.turns[0].At, Score: w.score, Said: said}
	}
	return out
}

// isOpener reports whether a turn of kind k is anima's own first message.
func isOpener(k brain.MessageKind) bool { return k == brain.KindProactive || k == brain.KindFollowup }

// rerank rescores search hits for Recall: anima's own first messages weigh openerWeight;
// best first.
func rerank(hits []hit) []hit {
	out := slices.Clone(hits)
	for i, h := range out {
		if isOpener(h.turn.Kind) {
			out[i].Score *= openerWeight
		}
	}
	slices.SortStableFunc(out, func(a, b hit) int { return cmp.Compare(b.Score, a.Score) })
	return out
}
