package memory

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// hit is a search result with what Recall needs to drop duplicates of recent turns.
type hit struct {
	brain.Hit
	seq uint64
	raw string
}

// Search returns up to limit (default 5, at most 50) memories of chat and user that
// match query, best first: past turns of the chat, its summary and the facts the user
// told in this chat, ranked by BM25. A turn's Text is "role: text", or for a user turn
// whose writer is known `"Name": text`. Errors are the store's.
func (m *Memory) Search(chat, user int64, query string, limit int) ([]brain.Hit, error) {
	hits, err := m.search(chat, user, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]brain.Hit, len(hits))
	for i, h := range hits {
		out[i] = h.Hit
	}
	return out, nil
}

type scored struct {
	doc   uint64 // turn's history Seq; 0 for a fact or the summary
	extra int    // index into the on-the-fly docs
	score float64
	at    time.Time
}

// better orders results: best score first; ties go to the newer turn (higher Seq), then
// to the newer fact or summary.
func better(a, b scored) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	if a.doc != b.doc {
		if a.doc > b.doc {
			return -1
		}
		return 1
	}
	return b.at.Compare(a.at)
}

// topK keeps the k best turns offered.
type topK struct {
	k    int
	best []scored
}

func (t *topK) offer(s scored) {
	if len(t.best) == t.k && better(s, t.best[len(t.best)-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(t.best, s, better)
	t.best = slices.Insert(t.best, i, s)
	if len(t.best) > t.k {
		t.best = t.best[:t.k]
	}
}

// segPostings are one segment's postings of the query terms.
type segPostings struct {
	seg   segment
	terms [][]byte // by query term; nil where the segment lacks it
	dfs   []uint64
}

func (m *Memory) search(chat, user int64, query string, limit int) ([]hit, error) {
	start := time.Now()
	defer func() { m.metrics.searchSeconds.Observe(time.Since(start).Seconds()) }()
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxSearchLimit)
	terms := uniq(tokenize(query, maxQueryTerms))
	if len(terms) == 0 {
		return nil, nil
	}
	if err := m.foldBacklog(chat); err != nil {
		return nil, fmt.Errorf("search chat %d: %w", chat, err)
	}
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[t] = true
	}
	var hits []hit
	err := m.st.View(func(tx *storage.Tx) error {
		st, err := loadStats(tx, chat)
		if err != nil {
			return err
		}
		// On-the-fly documents: the user's facts and the chat's summary.
		facts, err := loadFacts(tx, chat, user)
		if err != nil {
			return err
		}
		sum, err := m.loadSummary(tx, chat)
		if err != nil {
			return err
		}
		var extra []hit
		for _, f := range facts {
			extra = append(extra, hit{Hit: brain.Hit{Source: sourceFact, Text: f.Attribute + ": " + f.Value, At: f.At}})
		}
		if sum.Text != "" {
			extra = append(extra, hit{Hit: brain.Hit{Source: sourceSummary, Text: sum.Text, At: sum.At}})
		}
		extraTF := make([]map[string]int, len(extra))
		extraLen := make([]int, len(extra))
		n, total := float64(st.Docs), float64(st.TotalLen)
		for i, e := range extra {
			toks := tokenize(e.Text, maxDocTerms)
			extraLen[i] = len(toks)
			if len(toks) == 0 {
				continue
			}
			extraTF[i] = map[string]int{}
			for _, t := range toks {
				extraTF[i][t]++
			}
			n++
			total += float64(len(toks))
		}
		// The unfolded tail, read directly.
		var tail []tailDoc
		err = scanTail(tx, chat, st.Through, want, func(d tailDoc) error {
			if d.dl == 0 {
				return nil
			}
			tail = append(tail, d)
			n++
			total += float64(d.dl)
			return nil
		})
		if err != nil {
			return err
		}
		// The segments' postings of the query terms.
		segs := make([]segPostings, 0, len(st.Segs))
		for _, sm := range st.Segs {
			v, err := tx.PeekBlob(storage.BucketIndex, segKey(chat, sm.ID))
			if err != nil {
				return err
			}
			seg, err := parseSegment(v)
			if err != nil {
				return fmt.Errorf("segment %d: %w", sm.ID, err)
			}
			sp := segPostings{seg: seg, terms: make([][]byte, len(terms)), dfs: make([]uint64, len(terms))}
			found := false
			for i, t := range terms {
				p, df, err := seg.lookup(t)
				if err != nil {
					return fmt.Errorf("segment %d: %w", sm.ID, err)
				}
				sp.terms[i], sp.dfs[i] = p, df
				found = found || df > 0
			}
			if found {
				segs = append(segs, sp)
			}
		}
		if n == 0 {
			return nil
		}
		avgdl := total / n
		bm := func(tf, dl, idf float64) float64 {
			return idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avgdl))
		}
		idfs := make([]float64, len(terms))
		for i, term := range terms {
			var df float64
			for _, sp := range segs {
				df += float64(sp.dfs[i])
			}
			for _, d := range tail {
				if d.tf[term] > 0 {
					df++
				}
			}
			for j := range extra {
				if extraTF[j][term] > 0 {
					df++
				}
			}
			if df > 0 {
				idfs[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
			}
		}

		top := topK{k: limit}
		var scores []float64
		for _, sp := range segs {
			docs, err := m.docs.table(sp.seg)
			if err != nil {
				return err
			}
			scores = slices.Grow(scores[:0], len(docs))[:len(docs)]
			clear(scores)
			for i := range terms {
				if sp.dfs[i] == 0 {
					continue
				}
				err := eachPosting(sp.terms[i], sp.dfs[i], func(idx, tf uint64) {
					if idx < uint64(len(docs)) {
						scores[idx] += bm(float64(tf), float64(docs[idx].dl), idfs[i])
					}
				})
				if err != nil {
					return err
				}
			}
			for idx, s := range scores {
				if s > 0 {
					top.offer(scored{doc: docs[idx].seq, score: s})
				}
			}
		}
		for _, d := range tail {
			var s float64
			for i, term := range terms {
				if tf := d.tf[term]; tf > 0 {
					s += bm(float64(tf), float64(d.dl), idfs[i])
				}
			}
			if s > 0 {
				top.offer(scored{doc: d.seq, score: s})
			}
		}
		ranked := top.best
		for i := range extra {
			var s float64
			for j, term := range terms {
				if tf := extraTF[i][term]; tf > 0 {
					s += bm(float64(tf), float64(extraLen[i]), idfs[j])
				}
			}
			if s > 0 {
				ranked = append(ranked, scored{extra: i, score: s, at: extra[i].At})
			}
		}
		slices.SortFunc(ranked, better)
		for _, r := range ranked[:min(limit, len(ranked))] {
			if r.doc == 0 {
				h := extra[r.extra]
				h.Score = r.score
				hits = append(hits, h)
				continue
			}
			var t brain.Turn
			ok, err := tx.Get(storage.BucketHistory, storage.Key(chat, storage.U64(r.doc)), &t)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			who := t.Role
			if t.Name != "" && t.Role == "user" {
				who = strconv.Quote(brain.CleanName(t.Name))
			}
			text := brain.TruncateRunes(t.Text, maxDocRunes)
			hits = append(hits, hit{
				Hit: brain.Hit{Source: sourceTurn, Text: who + ": " + text, At: t.At, Score: r.score},
				seq: r.doc,
				raw: text,
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search chat %d: %w", chat, err)
	}
	return hits, nil
}

// foldBacklog folds chat's tail first when more than foldMax turns are unfolded (a chat
// migrated from an older schema, before its first upkeep), so that no search reads a
// long tail turn by turn; otherwise it costs a look at the tail's keys.
func (m *Memory) foldBacklog(chat int64) error {
	var n int
	err := m.st.View(func(tx *storage.Tx) error {
		st, err := loadStats(tx, chat)
		if err != nil {
			return err
		}
		n, err = tailLen(tx, chat, st.Through, foldMax+1)
		return err
	})
	if err != nil || n <= foldMax {
		return err
	}
	return m.foldAll(chat)
}
