package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
)

// hit is a search result with what Recall needs to leave out the recent turns, to weigh
// anima's own first messages and to find a turn's neighbours: for a turn, its history Seq
// and the turn as read (Seq set, its text cut to maxDocRunes).
type hit struct {
	brain.Hit
	seq  uint64
	turn brain.Turn
}

// Search returns up to limit (default 5, at most 50) memories of chat and user that
// match query, best first: past turns of the chat, its summary and the facts the user
// told in this chat, ranked by BM25. A turn's Text is "role: text", or for a user turn
// whose writer is known `"Name": text`. Errors are the store's.
func (m *Memory) Search(chat, user int64, query string, limit int) ([]brain.Hit, error) {
	if limit <= 0 {
		limit = defaultLimit
	}
	hits, err := m.search(chat, user, query, min(limit, maxSearchLimit))
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
	return m.searchAs(chat, user, query, limit, false)
}

// searchAs is search, ranking turns as the middles of windows when windowed (Recall's).
func (m *Memory) searchAs(chat, user int64, query string, limit int, windowed bool) ([]hit, error) {
	start := time.Now()
	defer func() { m.metrics.searchSeconds.Observe(time.Since(start).Seconds()) }()
	if limit <= 0 {
		limit = defaultLimit
	}
	terms := uniq(m.tok.terms(query, maxQueryTerms))
	if len(terms) == 0 {
		return nil, nil
	}
	var hits []hit
	folded := false
	find := func(tx Tx) error {
		st, err := loadStats(tx, chat)
		if err != nil {
			return err
		}
		if !folded {
			if stale(st, m.tok) {
				return errBacklog // built with other terms: rebuilt first (fold)
			}
			if err := checkBacklog(tx, chat, st); err != nil {
				return err
			}
		}
		c, err := m.loadCorpus(tx, chat, user, st, terms)
		if err != nil || c.n == 0 {
			return err
		}
		c.windowed = windowed
		ranked, err := m.rank(c, limit)
		if err != nil {
			return err
		}
		hits, err = loadHits(tx, chat, c, ranked[:min(limit, len(ranked))])
		return err
	}
	err := m.st.View(find)
	if errors.Is(err, errBacklog) {
		// Fold the backlog first, then search in a fresh transaction.
		folded = true
		if err = m.foldAll(chat); err == nil {
			err = m.st.View(find)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("search chat %d: %w", chat, err)
	}
	return hits, nil
}

// corpus is what one search scores: the chat's segments that hold a query term, its
// unfolded tail and the documents scored on the fly (the user's facts, the chat's
// summary), with the BM25 statistics over all of them.
type corpus struct {
	terms    []string
	segs     []segPostings
	tail     []tailDoc
	extra    []hit
	extraTF  []map[string]int
	extraLen []int
	n, total float64   // documents and their summed lengths in terms
	avgdl    float64   // total / n
	idfs     []float64 // by query term
	windowed bool      // turns ranked as windows' middles (window.go), for Recall
}

// loadCorpus reads chat's documents for the query terms.
func (m *Memory) loadCorpus(tx Tx, chat, user int64, st indexStats, terms []string) (*corpus, error) {
	c := &corpus{terms: terms, n: float64(st.Docs), total: float64(st.TotalLen)}
	if err := m.loadExtra(tx, c, chat, user); err != nil {
		return nil, err
	}
	// The unfolded tail, read directly.
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[t] = true
	}
	err := scanTail(tx, m.tok, chat, st.Through, want, func(d tailDoc) error {
		if d.dl == 0 {
			return nil
		}
		c.tail = append(c.tail, d)
		c.n++
		c.total += float64(d.dl)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.segs, err = segmentPostings(tx, chat, st.Segs, terms); err != nil {
		return nil, err
	}
	c.idfs = c.idf()
	if c.n > 0 {
		c.avgdl = c.total / c.n
	}
	return c, nil
}

// loadExtra adds the documents scored on the fly: the user's facts and the chat's summary.
func (m *Memory) loadExtra(tx Tx, c *corpus, chat, user int64) error {
	facts, err := loadFacts(tx, chat, user)
	if err != nil {
		return err
	}
	sum, err := m.loadSummary(tx, chat)
	if err != nil {
		return err
	}
	for _, f := range facts {
		c.extra = append(c.extra, hit{Hit: brain.Hit{Source: sourceFact, Text: f.Attribute + ": " + f.Value, At: f.At}})
	}
	if sum.Text != "" {
		c.extra = append(c.extra, hit{Hit: brain.Hit{Source: sourceSummary, Text: sum.Text, At: sum.At}})
	}
	c.extraTF = make([]map[string]int, len(c.extra))
	c.extraLen = make([]int, len(c.extra))
	for i, e := range c.extra {
		toks := m.tok.terms(e.Text, maxDocTerms)
		c.extraLen[i] = len(toks)
		if len(toks) == 0 {
			continue
		}
		c.extraTF[i] = map[string]int{}
		for _, t := range toks {
			c.extraTF[i][t]++
		}
		c.n++
		c.total += float64(len(toks))
	}
	return nil
}

// segmentPostings looks the query terms up in each of chat's segments and keeps the
// segments that hold any.
func segmentPostings(tx Tx, chat int64, metas []segMeta, terms []string) ([]segPostings, error) {
	segs := make([]segPostings, 0, len(metas))
	key := segKey(chat, 0) // one key for all: the store reads it and keeps none
	for _, sm := range metas {
		binary.BigEndian.PutUint64(key[len(key)-8:], sm.ID)
		v, err := tx.PeekBlob(brain.BucketIndex, key)
		if err != nil {
			return nil, err
		}
		seg, err := parseSegment(v)
		if err != nil {
			return nil, fmt.Errorf("segment %d: %w", sm.ID, err)
		}
		sp := segPostings{seg: seg, terms: make([][]byte, len(terms)), dfs: make([]uint64, len(terms))}
		found := false
		for i, t := range terms {
			p, df, err := seg.lookup(t)
			if err != nil {
				return nil, fmt.Errorf("segment %d: %w", sm.ID, err)
			}
			sp.terms[i], sp.dfs[i] = p, df
			found = found || df > 0
		}
		if found {
			segs = append(segs, sp)
		}
	}
	return segs, nil
}

// idf returns each query term's inverse document frequency over the whole corpus.
func (c *corpus) idf() []float64 {
	idfs := make([]float64, len(c.terms))
	for i, term := range c.terms {
		var df float64
		for _, sp := range c.segs {
			df += float64(sp.dfs[i])
		}
		for _, d := range c.tail {
			if d.tf[term] > 0 {
				df++
			}
		}
		for j := range c.extra {
			if c.extraTF[j][term] > 0 {
				df++
			}
		}
		if df > 0 {
			idfs[i] = math.Log(1 + (c.n-df+0.5)/(df+0.5))
		}
	}
	return idfs
}

// bm is term i's BM25 score in a document of dl terms where it occurs tf times.
func (c *corpus) bm(tf, dl float64, i int) float64 {
	return c.idfs[i] * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/c.avgdl))
}

// rank scores the corpus: the best limit turns of the segments and the tail, and every
// on-the-fly document that matches, best first.
func (m *Memory) rank(c *corpus, limit int) ([]scored, error) {
	top := topK{k: limit}
	var scores []float64
	for _, sp := range c.segs {
		docs, err := m.docs.table(sp.seg)
		if err != nil {
			return nil, err
		}
		if c.windowed {
			if err := c.segmentWindows(&top, sp, docs); err != nil {
				return nil, err
			}
			continue
		}
		scores = slices.Grow(scores[:0], len(docs))[:len(docs)]
		clear(scores)
		for i := range c.terms {
			if sp.dfs[i] == 0 {
				continue
			}
			err := eachPosting(sp.terms[i], sp.dfs[i], func(idx, tf uint64) {
				if idx < uint64(len(docs)) {
					scores[idx] += c.bm(float64(tf), float64(docs[idx].dl), i)
				}
			})
			if err != nil {
				return nil, err
			}
		}
		for idx, s := range scores {
			if s > 0 {
				top.offer(scored{doc: docs[idx].seq, score: s})
			}
		}
	}
	if c.windowed {
		c.tailWindows(&top)
	}
	for _, d := range c.tail {
		if c.windowed {
			break
		}
		var s float64
		for i, term := range c.terms {
			if tf := d.tf[term]; tf > 0 {
				s += c.bm(float64(tf), float64(d.dl), i)
			}
		}
		if s > 0 {
			top.offer(scored{doc: d.seq, score: s})
		}
	}
	ranked := top.best
	for i := range c.extra {
		var s float64
		for j, term := range c.terms {
			if tf := c.extraTF[i][term]; tf > 0 {
				s += c.bm(float64(tf), float64(c.extraLen[i]), j)
			}
		}
		if s > 0 {
			ranked = append(ranked, scored{extra: i, score: s, at: c.extra[i].At})
		}
	}
	slices.SortFunc(ranked, better)
	return ranked, nil
}

// errBacklog ends a search's transaction when chat's tail must be folded first.
var errBacklog = errors.New("unfolded backlog")

// checkBacklog returns errBacklog when more than foldMax of chat's turns are unfolded (a
// chat migrated from an older schema, before its first upkeep), so that no search reads
// a long tail turn by turn; otherwise it costs a look at the tail's keys.
func checkBacklog(tx Tx, chat int64, st indexStats) error {
	n, err := tailLen(tx, chat, st.Through, foldMax+1)
	if err != nil {
		return err
	}
	if n > foldMax {
		return errBacklog
	}
	return nil
}
