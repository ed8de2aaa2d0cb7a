package memory

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// The search index lives in storage.BucketIndex, every key prefixed with the chat id:
//
//	chat 's'                       → indexStats (JSON)
//	chat 'd' doc                   → indexDoc (JSON): one indexed turn
//	chat 'p' term 0x00 doc         → uvarint tf, uvarint doc length (a posting)
//
// One key per posting keeps a commit's writes small (no posting list is rewritten as it
// grows); a term's postings are one prefix scan. Doc ids are the chat's own counter in
// indexStats. Facts and the summary are few and change in place, so Search scores them on
// the fly instead of indexing them.
const (
	tagStats   = 's'
	tagDoc     = 'd'
	tagPosting = 'p'
)

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

// Hit sources.
const (
	sourceTurn    = "turn"
	sourceSummary = "summary"
	sourceFact    = "fact"
)

type indexStats struct {
	Docs     uint64 `json:"docs"`
	TotalLen uint64 `json:"total_len"`
	NextDoc  uint64 `json:"next_doc"`
	// Through is the highest history Seq indexed.
	Through uint64 `json:"through_seq"`
}

type indexDoc struct {
	Seq  uint64    `json:"seq,omitempty"`
	Role string    `json:"role"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	// Name is the writer of a user turn (groups label their members' lines).
	Name string `json:"name,omitempty"`
}

func statsKey(chat int64) []byte { return storage.Key(chat, []byte{tagStats}) }

func docKey(chat int64, id uint64) []byte { return storage.Key(chat, []byte{tagDoc}, storage.U64(id)) }

func postingPrefix(chat int64, term string) []byte {
	k := storage.Key(chat, []byte{tagPosting}, []byte(term))
	return append(k, 0)
}

func loadStats(tx *storage.Tx, chat int64) (indexStats, error) {
	var s indexStats
	if _, err := tx.Get(storage.BucketIndex, statsKey(chat), &s); err != nil {
		return indexStats{}, fmt.Errorf("read index stats of chat %d: %w", chat, err)
	}
	return s, nil
}

// IndexTx adds turns of chat to the search index inside tx, so that history and index
// are committed together (use it as storage.Commit.Also). Turns without a Seq take the
// Seq of the chat's latest history entries in tx when those match them, as they do when
// CommitTurn wrote them earlier in the same transaction. Turns already indexed (Seq at
// or below the index's high-water mark) are skipped. Errors are the store's.
func (m *Memory) IndexTx(tx *storage.Tx, chat int64, turns []brain.Turn) error {
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
func withSeqs(tx *storage.Tx, chat int64, turns []brain.Turn) []brain.Turn {
	missing := false
	for _, t := range turns {
		missing = missing || t.Seq == 0
	}
	if !missing {
		return turns
	}
	last := make([]brain.Turn, 0, len(turns))
	err := tx.ScanReverse(storage.BucketHistory, storage.ID64(chat), func(k, v []byte) error {
		var t brain.Turn
		if err := json.Unmarshal(v, &t); err != nil {
			return err
		}
		t.Seq = binary.BigEndian.Uint64(k[len(k)-8:])
		last = append(last, t)
		if len(last) == len(turns) {
			return storage.ErrStop
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

func indexTx(tx *storage.Tx, chat int64, turns []brain.Turn) error {
	st, err := loadStats(tx, chat)
	if err != nil {
		return err
	}
	tf := map[string]uint64{}
	var val []byte
	for _, t := range turns {
		if t.Seq != 0 && t.Seq <= st.Through {
			continue
		}
		st.Through = max(st.Through, t.Seq)
		terms := tokenize(t.Text, maxDocTerms)
		if len(terms) == 0 {
			continue
		}
		clear(tf)
		for _, term := range terms {
			tf[term]++
		}
		st.NextDoc++
		id := st.NextDoc
		d := indexDoc{Seq: t.Seq, Role: t.Role, Text: brain.TruncateRunes(t.Text, maxDocRunes), At: t.At, Name: t.Name}
		if err := tx.Put(storage.BucketIndex, docKey(chat, id), d); err != nil {
			return err
		}
		dl := uint64(len(terms))
		for term, n := range tf {
			val = binary.AppendUvarint(val[:0], n)
			val = binary.AppendUvarint(val, dl)
			if err := tx.PutRaw(storage.BucketIndex, append(postingPrefix(chat, term), storage.U64(id)...), val); err != nil {
				return err
			}
		}
		st.Docs++
		st.TotalLen += dl
	}
	return tx.Put(storage.BucketIndex, statsKey(chat), st)
}

// Reindex brings chat's search index up to date with its history: it indexes the turns
// after the index's high-water mark (all of them when there is no index yet), in one
// transaction. It returns how many turns it looked at.
func (m *Memory) Reindex(chat int64) (int, error) {
	var n int
	err := m.st.Update(func(tx *storage.Tx) error {
		st, err := loadStats(tx, chat)
		if err != nil {
			return err
		}
		var behind []brain.Turn
		err = tx.ScanReverse(storage.BucketHistory, storage.ID64(chat), func(k, v []byte) error {
			seq := binary.BigEndian.Uint64(k[len(k)-8:])
			if seq <= st.Through {
				return storage.ErrStop
			}
			var t brain.Turn
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decode history entry: %w", err)
			}
			t.Seq = seq
			behind = append(behind, t)
			return nil
		})
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
	return n, nil
}

// UnindexTx removes the turns of chat with the given history Seqs from the search index
// inside tx (storage.Store.ForgetUser): their documents, their postings and their share
// of the statistics. Errors are the store's.
func (m *Memory) UnindexTx(tx *storage.Tx, chat int64, seqs []uint64) error {
	if len(seqs) == 0 {
		return nil
	}
	drop := make(map[uint64]bool, len(seqs))
	for _, s := range seqs {
		drop[s] = true
	}
	st, err := loadStats(tx, chat)
	if err != nil {
		return err
	}
	docs := map[uint64]bool{}
	var keys [][]byte
	err = tx.Scan(storage.BucketIndex, storage.Key(chat, []byte{tagDoc}), func(k, v []byte) error {
		var d indexDoc
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("decode index doc: %w", err)
		}
		if d.Seq != 0 && drop[d.Seq] && len(k) >= 8 {
			docs[binary.BigEndian.Uint64(k[len(k)-8:])] = true
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	})
	if err != nil || len(docs) == 0 {
		return err
	}
	lens := map[uint64]uint64{}
	err = tx.Scan(storage.BucketIndex, storage.Key(chat, []byte{tagPosting}), func(k, v []byte) error {
		if len(k) < 8 {
			return nil
		}
		doc := binary.BigEndian.Uint64(k[len(k)-8:])
		if !docs[doc] {
			return nil
		}
		if _, n := binary.Uvarint(v); n > 0 {
			if dl, m := binary.Uvarint(v[n:]); m > 0 {
				lens[doc] = dl
			}
		}
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := tx.Delete(storage.BucketIndex, k); err != nil {
			return err
		}
	}
	for _, dl := range lens {
		st.Docs = max(st.Docs, 1) - 1
		st.TotalLen -= min(st.TotalLen, dl)
	}
	if err := tx.Put(storage.BucketIndex, statsKey(chat), st); err != nil {
		return fmt.Errorf("unindex turns of chat %d: %w", chat, err)
	}
	return nil
}

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
	doc   uint64 // turn doc id; 0 for a fact or the summary
	extra int    // index into the on-the-fly docs
	score float64
	at    time.Time
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
		if n == 0 {
			return nil
		}
		avgdl := total / n

		bm := func(tf, dl, idf float64) float64 {
			return idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avgdl))
		}
		turnScores := map[uint64]float64{}
		extraScores := make([]float64, len(extra))
		type posting struct{ doc, tf, dl uint64 }
		var postings []posting
		for _, term := range terms {
			postings = postings[:0]
			prefix := postingPrefix(chat, term)
			err := tx.Scan(storage.BucketIndex, prefix, func(k, v []byte) error {
				tf, a := binary.Uvarint(v)
				dl, b := binary.Uvarint(v[max(a, 0):])
				if a <= 0 || b <= 0 || len(k) != len(prefix)+8 {
					return fmt.Errorf("corrupt posting for %q", term)
				}
				postings = append(postings, posting{binary.BigEndian.Uint64(k[len(prefix):]), tf, dl})
				return nil
			})
			if err != nil {
				return err
			}
			df := float64(len(postings))
			for i := range extra {
				if extraTF[i][term] > 0 {
					df++
				}
			}
			if df == 0 {
				continue
			}
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			for _, p := range postings {
				turnScores[p.doc] += bm(float64(p.tf), float64(p.dl), idf)
			}
			for i := range extra {
				if tf := extraTF[i][term]; tf > 0 {
					extraScores[i] += bm(float64(tf), float64(extraLen[i]), idf)
				}
			}
		}

		ranked := make([]scored, 0, len(turnScores)+len(extra))
		for doc, s := range turnScores {
			ranked = append(ranked, scored{doc: doc, score: s})
		}
		for i, s := range extraScores {
			if s > 0 {
				ranked = append(ranked, scored{extra: i, score: s, at: extra[i].At})
			}
		}
		// Best score first; ties go to the newer turn (higher doc id).
		slices.SortFunc(ranked, func(a, b scored) int {
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
		})
		for _, r := range ranked[:min(limit, len(ranked))] {
			if r.doc == 0 {
				h := extra[r.extra]
				h.Score = r.score
				hits = append(hits, h)
				continue
			}
			var d indexDoc
			ok, err := tx.Get(storage.BucketIndex, docKey(chat, r.doc), &d)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			who := d.Role
			if d.Name != "" && d.Role == "user" {
				who = strconv.Quote(brain.CleanName(d.Name))
			}
			hits = append(hits, hit{
				Hit: brain.Hit{Source: sourceTurn, Text: who + ": " + d.Text, At: d.At, Score: r.score},
				seq: d.Seq,
				raw: d.Text,
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search chat %d: %w", chat, err)
	}
	return hits, nil
}

func uniq(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// tokenize splits s into index terms: lower-cased runs of Unicode letters and digits,
// stopwords and single ASCII letters (the "s" of "it's") dropped, a light plural stemming, each at most 32 bytes; at most max terms.
func tokenize(s string, max int) []string {
	var out []string
	for len(s) > 0 && len(out) < max {
		i := strings.IndexFunc(s, isWordRune)
		if i < 0 {
			break
		}
		s = s[i:]
		j := strings.IndexFunc(s, func(r rune) bool { return !isWordRune(r) })
		if j < 0 {
			j = len(s)
		}
		w := strings.ToLower(s[:j])
		s = s[j:]
		if _, stop := stopwords[w]; stop || len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' {
			continue
		}
		out = append(out, clip(stem(w), maxTermBytes))
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// stem strips English plural endings: "bicycles" → "bicycle", "stories" → "story".
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// clip cuts w to at most n bytes on a rune boundary.
func clip(w string, n int) string {
	if len(w) <= n {
		return w
	}
	for n > 0 && !utf8.RuneStart(w[n]) {
		n--
	}
	return w[:n]
}

var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at
		be because been before being below between both but by can could did do does doing down
		during each few for from further had has have having he her here hers herself him himself
		his how i if in into is it its itself just me more most my myself no nor not now of off on
		once only or other our ours ourselves out over own same she should so some such than that
		the their theirs them themselves then there these they this those through to too under
		until up very was we were what when where which while who whom why will with would you
		your yours yourself yourselves im dont ok okay yes yeah oh`) {
		m[w] = struct{}{}
	}
	return m
}()
