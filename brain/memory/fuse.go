package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Recall's candidates come from two rankings when an embedder is set: BM25 over the words
// (search.go) and the cosine of the turns' vectors with the query's (vectors.go). They are
// fused by reciprocal rank: a candidate scores Σ 1/(rrfK + rank) over the rankings that
// hold it, so a turn both find comes first, and one only the meaning finds (a synonym, a
// paraphrase) still gets in. Ranks, not scores, are fused: BM25 is unbounded and a
// cosine is not, and neither scale means anything to the other. The query is embedded
// while the lexical search runs, so the fusion adds the slower of the two to Recall, not
// their sum; without vectors (no embedder, the endpoint failing, the chat not embedded
// yet, the query slower than its timeout) the lexical ranking is used alone.
const rrfK = 60

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
	lex, err := m.search(chat, user, query, limit)
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

// fuse merges rankings (best first) into one by reciprocal rank, best first; a hit is
// known by its turn's Seq, or by its text for a fact or the summary.
func fuse(rankings ...[]hit) []hit {
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
	for _, ranking := range rankings {
		for rank, h := range ranking {
			k := keyOf(h)
			s := 1 / float64(rrfK+rank+1)
			if i, ok := at[k]; ok {
				out[i].Score += s
				continue
			}
			at[k] = len(out)
			h.Score = s
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b hit) int { return cmp.Compare(b.Score, a.Score) })
	return out
}
