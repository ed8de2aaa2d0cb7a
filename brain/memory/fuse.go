package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Recall's candidates come from two rankings when an embedder is set: BM25 over the words
// (search.go) and the cosine of the turns' vectors with the query's (vectors.go). They are
// fused by their scores, each scaled within its own ranking (fuse), the meaning weighing
// meaningWeight of the words: a turn both find comes first, and one only the meaning
// finds (a synonym, a paraphrase) still gets in. Reciprocal rank fusion was measured and
// dropped: it flattens the BM25 scores that rerank's weights were chosen on, and on
// LoCoMo with the fake embeddings (anima bench memory --live) it lost 13 points of
// evidence anywhere (84.7 → 71.7 %) where this loses 1 (→ 83.6 %). The query is embedded
// while the lexical search runs, so the fusion adds the slower of the two to Recall, not
// their sum; without vectors (no embedder, the endpoint failing, the chat not embedded
// yet, the query slower than its timeout) the lexical ranking is used alone.
const meaningWeight = 0.5

// recallHits is the ranking Recall draws its memories from: the lexical one, fused with
// the one by meaning when there is one. Errors are the store's.
func (m *Memory) recallHits(ctx context.Context, chat, user int64, query string, limit int) ([]hit, error) {
	var qv []float32
	done := make(chan struct{})
	if m.embed.usable() {
		go func() {
			defer close(done)
			qv = m.queryVector(ctx, chat, user, query)
		}()
	} else {
		close(done)
	}
	lex, err := m.searchAs(chat, user, query, limit, true)
	<-done // bounded by the query timeout
	if err != nil || qv == nil {
		return lex, err
	}
	var vec []hit
	err = m.st.View(func(tx Tx) error {
		ranked, err := vecRank(tx, chat, m.embed.e.ID(), qv, limit)
		if err != nil {
			return err
		}
		vec, err = loadHits(tx, chat, nil, ranked)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search chat %d by meaning: %w", chat, err)
	}
	return fuse(lex, vec), nil
}

// fuse merges a lexical ranking and one by meaning (best first) into one, best first: each
// score is scaled to [0, 1] within its ranking (BM25 by the best; cosines from the worst
// to the best of the list, as they crowd in a narrow band), and a hit scores
// lex + meaningWeight·vec over the rankings that hold it. The scale keeps the shape of
// the BM25 scores, which rerank's weights were chosen on. A hit is known by its turn's Seq,
// or by its text for a fact or the summary.
func fuse(lex, vec []hit) []hit {
	type key struct {
		seq  uint64
		text string
	}
	keyOf := func(h hit) key {
		if h.seq != 0 {
			return key{seq: h.seq}
		}
		return key{text: h.Text}
	}
	at := map[key]int{}
	var out []hit
	add := func(ranking []hit, w, lo float64) {
		hi := lo
		for _, h := range ranking {
			hi = max(hi, h.Score)
		}
		if hi <= lo {
			return
		}
		for _, h := range ranking {
			s := w * (h.Score - lo) / (hi - lo)
			if i, ok := at[keyOf(h)]; ok {
				out[i].Score += s
				continue
			}
			at[keyOf(h)] = len(out)
			h.Score = s
			out = append(out, h)
		}
	}
	add(lex, 1, 0)
	if len(vec) > 0 {
		lo := vec[0].Score
		for _, h := range vec {
			lo = min(lo, h.Score)
		}
		add(vec, meaningWeight, lo)
	}
	slices.SortStableFunc(out, func(a, b hit) int { return cmp.Compare(b.Score, a.Score) })
	return out
}
