// Package memory is anima's long-term memory: facts about users, a rolling summary of each
// chat's older turns, and BM25 search over everything said. It lives in the store
// (buckets facts, summaries and index, and marks on history), reached through the small
// Tx it declares (store.go), and gives cognition a Recall whose size does not grow with the
// length of the history.
package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// Summarizer folds conversation turns into a running summary. Summarize returns the new
// summary (previous plus turns) or the provider's error.
type Summarizer interface {
	Summarize(ctx context.Context, previous string, turns []brain.Turn) (string, error)
}

// Options tune a Memory. The zero value is usable.
type Options struct {
	Logger *slog.Logger
	Clock  brain.Clock
	// RecentTurns is how many of the last turns Recall returns verbatim (default 12).
	RecentTurns int
	// SummarizeAfter is how many turns not covered by the summary Maintain tolerates
	// before it folds them in (default 40). One at or below RecentTurns is counted beyond
	// the recent turns (RecentTurns + SummarizeAfter), so that a fold has turns to fold.
	SummarizeAfter int
	// Registerer receives the package's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Language is the language whose words the search index stems (one of Languages; ""
	// is english), and Name anima's own name, indexed with its turns. An index built for
	// another language or name is rebuilt from history when next used.
	Language, Name string
	// Embedder, when not nil, makes Recall fuse a ranking by meaning with the lexical
	// one (embedding.go, fuse.go): turns are embedded in Maintain, the query in Recall
	// within QueryTimeout (default DefaultQueryTimeout). Nil: recall is lexical alone.
	Embedder     Embedder
	QueryTimeout time.Duration
	// Meter counts what embeddings cost in the day's budget and the person's share; nil
	// counts nothing (SetMeter sets it later, when the accountant is built after memory).
	Meter Meter
}

// Limits on what memory stores and returns.
const (
	// DefaultBudgetTokens is Recall's budget when the caller passes none.
	DefaultBudgetTokens = 1500
	maxAttributeRunes   = 64
	maxValueRunes       = 500
	maxFactsPerUser     = 200
	maxSummaryRunes     = 4000
	// maxFold bounds the turns sent to one Summarize call (a long history that was never
	// summarised is folded in several Maintain calls, oldest first).
	maxFold = 400
	// hitTextBytes bounds one recalled turn's text; memoryShare is the percentage of
	// Recall's budget its memories may take (recall.go fills it).
	hitTextBytes = 400
	memoryShare  = 15
)

// ErrTooManyFacts is returned by Remember when a user already has the maximum number of
// facts and the attribute is new.
var ErrTooManyFacts = errors.New("too many facts about this user; replace an existing attribute")

// Memory stores and recalls what anima knows. Its methods are safe for concurrent use.
type Memory struct {
	st      txns
	sum     Summarizer
	log     *slog.Logger
	clock   brain.Clock
	recent  int
	after   int
	metrics *metrics
	docs    *docCache
	tok     tokenizer
	embed   *embedding
	meter   Meter

	mu          sync.Mutex
	summarizing map[int64]bool // chats with a Maintain in flight
}

// New returns a Memory over st (a *storage.Store in anima). A nil Summarizer disables
// summarisation. It first runs the migrations of the search index that st owes (an old
// store's, migrate.go), so no Memory reads or writes an index in an old layout; their
// errors, and the store's, are returned.
func New[T Tx](st Store[T], s Summarizer, opts Options) (*Memory, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = brain.RealClock{}
	}
	if opts.RecentTurns <= 0 {
		opts.RecentTurns = 12
	}
	if opts.SummarizeAfter <= 0 {
		opts.SummarizeAfter = 40
	}
	if opts.SummarizeAfter <= opts.RecentTurns {
		opts.SummarizeAfter += opts.RecentTurns
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = DefaultQueryTimeout
	}
	m := &Memory{
		st:          txnsOf(st),
		sum:         s,
		log:         opts.Logger.With("component", "memory"),
		clock:       opts.Clock,
		recent:      opts.RecentTurns,
		after:       opts.SummarizeAfter,
		metrics:     newMetrics(opts.Registerer),
		docs:        newDocCache(docCacheBytes),
		tok:         newTokenizer(opts.Language, opts.Name),
		summarizing: map[int64]bool{},
		meter:       opts.Meter,
	}
	m.embed = &embedding{e: opts.Embedder, log: m.log, clock: opts.Clock, timeout: opts.QueryTimeout,
		metrics: m.metrics, busy: map[int64]bool{}}
	if opts.Embedder == nil {
		m.log.Info("no embedding model: recall is lexical alone")
	}
	if err := ensureBuckets(m.st); err != nil {
		return nil, fmt.Errorf("create memory's buckets: %w", err)
	}
	from, err := upgrade(m.st)
	if err != nil {
		return nil, fmt.Errorf("upgrade search index: %w", err)
	}
	if from > 0 {
		m.log.Info("search index upgraded", "from_schema", from)
	}
	return m, nil
}

// SetMeter sets where embedding costs are counted. Call it before the Memory is used
// (bot builds cognition, the accountant, after memory).
func (m *Memory) SetMeter(mt Meter) { m.meter = mt }

// summary is the persisted summary of a chat (BucketSummaries, key ID64(chat)).
type summary struct {
	Text string `json:"text"`
	// Through is the Seq of the last turn the summary covers.
	Through uint64    `json:"through_seq"`
	At      time.Time `json:"at"`
}

func (m *Memory) loadSummary(tx Tx, chat int64) (summary, error) {
	var s summary
	if _, err := tx.Get(brain.BucketSummaries, brain.ID64(chat), &s); err != nil {
		return summary{}, fmt.Errorf("read summary of chat %d: %w", chat, err)
	}
	return s, nil
}

// Summary returns the persisted summary of chat ("" if none) and the Seq of the last turn
// it covers.
func (m *Memory) Summary(chat int64) (string, uint64, error) {
	s, err := viewed(m.st, func(tx Tx) (summary, error) { return m.loadSummary(tx, chat) })
	return s.Text, s.Through, err
}

// Recall gathers what memory contributes to a prompt about chat: the user's facts told in
// this chat (a group never sees a member's private facts), the
// chat's summary, its last RecentTurns turns, older turns relevant to query — by its words,
// and by its meaning where an embedder is set (fuse.go) — with the turns
// around them until the memories' share (15 %) is full (recall.go), and the notes of how they are (recallStates: in a group, of up to 4 members). The result is trimmed to about budgetTokens (4 characters a token; ≤ 0 means
// DefaultBudgetTokens), so its size is bounded whatever the length of the history. Errors
// are the store's.
func (m *Memory) Recall(ctx context.Context, chat, user int64, query string, budgetTokens int) (brain.Recall, error) {
	if budgetTokens <= 0 {
		budgetTokens = DefaultBudgetTokens
	}
	var r brain.Recall
	facts, err := m.Facts(chat, user)
	if err != nil {
		return r, err
	}
	text, _, err := m.Summary(chat)
	if err != nil {
		return r, err
	}
	turns, err := m.st.History(chat, m.recent)
	if err != nil {
		return r, fmt.Errorf("recall history of chat %d: %w", chat, err)
	}
	var mems []brain.Hit
	if strings.TrimSpace(query) != "" && ctx.Err() == nil {
		hits, err := m.recallHits(ctx, chat, user, query, recallCandidates+len(turns))
		if err != nil {
			return r, err
		}
		if mems, err = m.recallWindows(chat, hits, turns, budgetTokens*4*memoryShare/100); err != nil {
			return r, fmt.Errorf("recall memories of chat %d: %w", chat, err)
		}
	}
	r = fit(budgetTokens*4, facts, text, turns, mems)
	r.HowTheyAre, err = viewed(m.st, func(tx Tx) ([]brain.StateNote, error) {
		return recallStates(tx, chat, user, turns, m.clock.Now())
	})
	return r, err
}

// fit builds a Recall within budget characters. Shares: facts ≤ 15 %, summary ≤ 25 %,
// memories ≤ 15 %; the newest turns get the rest (and what the others left unused).
func fit(budget int, facts []brain.Fact, sum string, turns []brain.Turn, mems []brain.Hit) brain.Recall {
	var r brain.Recall
	left := budget

	// Facts: the most recently learned first when they do not all fit.
	share := budget * 15 / 100
	if total := factsChars(facts); total > share {
		sorted := append([]brain.Fact(nil), facts...)
		sortFactsByRecency(sorted)
		var kept []brain.Fact
		for _, f := range sorted {
			if c := factChars(f); c <= share {
				kept = append(kept, f)
				share -= c
			}
		}
		sortFactsByAttribute(kept)
		facts = kept
	}
	r.Facts = facts
	left -= factsChars(facts)

	r.Summary = truncate(sum, min(budget*25/100, left))
	left -= len(r.Summary)

	share = min(budget*memoryShare/100, left)
	for _, mem := range mems {
		if c := len(mem.Text) + hitOverhead; c <= share {
			r.Memories = append(r.Memories, mem)
			share -= c
			left -= c
		}
	}

	// Turns, newest first, whole while they fit; the first that does not fit is cut to
	// fill what is left (so a trimmed Recall uses its budget exactly).
	var kept []brain.Turn
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		if c := turnChars(t); c <= left {
			kept = append(kept, t)
			left -= c
			continue
		}
		if left-turnOverhead >= minPartialTurn {
			t.Text = truncate(t.Text, left-turnOverhead)
			kept = append(kept, t)
		}
		break
	}
	slices.Reverse(kept)
	r.Turns = kept
	return r
}

// Per-item overheads, roughly what a prompt spends around each entry.
const (
	factOverhead = 4
	turnOverhead = 24
	hitOverhead  = 24
	// minPartialTurn is the least text worth keeping of a turn cut to fit the budget.
	minPartialTurn = 16
)

func factChars(f brain.Fact) int { return len(f.Attribute) + len(f.Value) + factOverhead }

func factsChars(fs []brain.Fact) int {
	n := 0
	for _, f := range fs {
		n += factChars(f)
	}
	return n
}

func turnChars(t brain.Turn) int { return len(t.Text) + turnOverhead }

// Chars estimates the prompt size of r in characters (tokens ≈ Chars/4).
func Chars(r brain.Recall) int {
	n := factsChars(r.Facts) + len(r.Summary)
	for _, t := range r.Turns {
		n += turnChars(t)
	}
	for _, h := range r.Memories {
		n += len(h.Text) + hitOverhead
	}
	return n
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= len("…") {
		return ""
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
