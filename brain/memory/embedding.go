package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
)

// How turns are embedded: in the upkeep after a turn (Maintain), never in the turn,
// once embedMin turns have gathered unembedded — the newest turns are in the prompt
// anyway, and lexical search finds the rest — up to embedBatch texts a request and
// embedMaxPerMaintain turns an upkeep (a long history, or one whose vectors were made by
// another model, catches up over several). The query is embedded in Recall, beside the
// lexical search, within queryTimeout; a slower answer leaves that Recall lexical.
const (
	embedMin            = 16
	embedBatch          = 128
	embedMaxPerMaintain = 512
	embedTextRunes      = 1000
	// embedCooldown is how long embeddings rest after a failure (an endpoint down is
	// not asked again on every reply).
	embedCooldown = time.Minute
	// DefaultQueryTimeout bounds the query's embedding on the reply path.
	DefaultQueryTimeout = 1500 * time.Millisecond
	// embedTimeout bounds one batch's request in the upkeep.
	embedTimeout = 30 * time.Second
)

// embedding is what Memory knows of its embedder: whether it answers, and which chats
// have a batch in flight. Its reasons go to the log once each, never per request.
type embedding struct {
	e       Embedder // nil: recall is lexical alone
	meter   Meter
	log     *slog.Logger
	clock   brain.Clock
	timeout time.Duration
	metrics *metrics

	mu      sync.Mutex
	off     error     // the endpoint has no such model: lexical until restart
	resting time.Time // after a failure, no request until then
	failing bool      // the last request failed (logged once, until one answers)
	busy    map[int64]bool
}

// usable reports whether embeddings may be asked for now.
func (em *embedding) usable() bool {
	if em.e == nil {
		return false
	}
	em.mu.Lock()
	defer em.mu.Unlock()
	return em.off == nil && !em.clock.Now().Before(em.resting)
}

// embed asks the embedder for texts' vectors, timed and counted under purpose ("turns",
// "query"), and records whether it answered; a failure is logged when it starts.
func (em *embedding) embed(ctx context.Context, purpose string, texts []string) ([][]float32, int, error) {
	start := time.Now()
	vecs, tokens, err := em.e.Embed(ctx, texts)
	em.metrics.embedSeconds.WithLabelValues(purpose).Observe(time.Since(start).Seconds())
	em.mu.Lock()
	defer em.mu.Unlock()
	switch {
	case err == nil:
		em.metrics.embedRequests.WithLabelValues(purpose, "ok").Inc()
		em.metrics.embedTokens.WithLabelValues(purpose).Add(float64(tokens))
		if em.failing {
			em.log.Info("embeddings answer again: recall fuses meaning with words", "embedder", em.e.ID())
		}
		em.failing = false
		return vecs, tokens, nil
	case errors.Is(err, ErrNoEmbeddings):
		em.metrics.embedRequests.WithLabelValues(purpose, "refused").Inc()
		if em.off == nil {
			em.off = err
			em.log.Warn("no embeddings: recall is lexical alone until restart", "embedder", em.e.ID(), "err", err)
		}
	default:
		result := "error"
		if errors.Is(err, context.DeadlineExceeded) {
			result = "timeout"
		}
		em.metrics.embedRequests.WithLabelValues(purpose, result).Inc()
		em.resting = em.clock.Now().Add(embedCooldown)
		if !em.failing {
			em.failing = true
			em.log.Warn("embeddings failing: recall is lexical until they answer", "embedder", em.e.ID(),
				"purpose", purpose, "retry_after", embedCooldown, "err", err)
		}
	}
	return nil, 0, err
}

// claim marks chat's batch in flight; false when one already is.
func (em *embedding) claim(chat int64) bool {
	em.mu.Lock()
	defer em.mu.Unlock()
	if em.busy[chat] {
		return false
	}
	em.busy[chat] = true
	return true
}

func (em *embedding) release(chat int64) {
	em.mu.Lock()
	defer em.mu.Unlock()
	delete(em.busy, chat)
}

// pending is a batch of turns to embed: their Seqs, texts and users, and the highest
// history Seq looked at.
type pending struct {
	seqs    []uint64
	texts   []string
	users   []int64
	through uint64
}

// embedTurns embeds chat's turns that have no vector yet, in batches, once embedMin have
// gathered (see the constants). Failures leave recall lexical and are logged once by
// embed, so it returns only the store's errors.
func (m *Memory) embedTurns(ctx context.Context, chat int64) error {
	em := m.embed
	if !em.usable() || !em.claim(chat) {
		return nil
	}
	defer em.release(chat)
	for done := 0; done < embedMaxPerMaintain; {
		var p pending
		var from uint64
		err := m.st.View(func(tx Tx) error {
			st, err := loadVecStats(tx, chat)
			if err != nil {
				return err
			}
			if from = st.Through; st.Embedder != em.e.ID() {
				from = 0
			}
			// Most upkeeps find fewer than embedMin: a look at the keys tells.
			if n, err := tailLen(tx, chat, from, embedMin); err != nil || n < embedMin {
				return err
			}
			p, err = m.pendingTurns(tx, chat, from)
			return err
		})
		if err != nil {
			return fmt.Errorf("embed turns of chat %d: %w", chat, err)
		}
		// Too few to ask for: they wait for more (none at all: the entries looked at,
		// unindexed ones, are passed over without a request).
		if p.through == 0 || len(p.seqs) > 0 && len(p.seqs) < embedMin {
			return nil
		}
		if len(p.seqs) > 0 && m.meter != nil && !m.meter.Allowed(0) {
			return nil // the day's budget is spent: the turns wait
		}
		if ok, err := m.embedBatch(ctx, chat, from, p); err != nil || !ok {
			return err
		}
		done += max(len(p.seqs), 1)
	}
	return nil
}

// pendingTurns reads up to embedBatch of chat's marked turns after Seq from.
func (m *Memory) pendingTurns(tx Tx, chat int64, from uint64) (pending, error) {
	var p pending
	err := tx.HistoryFrom(chat, from+1, func(k, v []byte) error {
		if len(k) != 16 {
			return nil
		}
		t, marked, err := brain.DecodeHistory(v)
		if err != nil {
			return err
		}
		seq := historySeq(k)
		p.through = seq
		if marked && t.Text != "" {
			p.seqs = append(p.seqs, seq)
			p.texts = append(p.texts, brain.TruncateRunes(m.tok.indexedText(t), embedTextRunes))
			u := t.User
			if u == 0 && chat > 0 {
				u = chat // a private chat's turns are its user's
			}
			p.users = append(p.users, u)
		}
		if len(p.seqs) == embedBatch {
			return brain.ErrStop
		}
		return nil
	})
	return p, err
}

// embedBatch embeds p's texts, charges their tokens and stores their vectors, unless
// another upkeep stored some meanwhile or their turns were forgotten. ok is false when
// the embedder failed (embed logged it).
func (m *Memory) embedBatch(ctx context.Context, chat int64, from uint64, p pending) (ok bool, err error) {
	var vecs [][]float32
	if len(p.texts) > 0 {
		rctx, cancel := context.WithTimeout(ctx, embedTimeout)
		var tokens int
		vecs, tokens, err = m.embed.embed(rctx, "turns", p.texts)
		cancel()
		if err != nil {
			return false, nil // logged once by embed; recall stays lexical meanwhile
		}
		m.charge(p, tokens)
	}
	id := m.embed.e.ID()
	err = m.st.Update(func(tx Tx) error {
		st, err := loadVecStats(tx, chat)
		if err != nil {
			return err
		}
		cur := st.Through
		if st.Embedder != id {
			cur = 0
		}
		if cur != from {
			return nil // stored meanwhile
		}
		if st.Embedder != id || (len(vecs) > 0 && st.Dims != len(vecs[0])) {
			dims := 0
			if len(vecs) > 0 {
				dims = len(vecs[0])
			}
			if st, err = dropVectors(tx, chat, st, id, dims); err != nil {
				return err
			}
		}
		var vs []vector
		for i, seq := range p.seqs {
			// A turn forgotten while it was embedded leaves no vector behind.
			if raw, err := tx.HistoryRaw(chat, seq); err != nil || raw == nil {
				if err != nil {
					return err
				}
				continue
			}
			vs = append(vs, quantize(seq, vecs[i]))
		}
		if from == 0 && len(vs) == 0 && len(st.Blocks) == 0 {
			if raw, err := tx.HistoryRaw(chat, p.through); err != nil || raw == nil {
				return err // the chat was forgotten: nothing of it is written back
			}
		}
		if st, err = putVectors(tx, chat, st, vs); err != nil {
			return err
		}
		st.Through = p.through
		m.metrics.embedTurns.Add(float64(len(vs)))
		return tx.Put(brain.BucketIndex, vecStatsKey(chat), st)
	})
	if err != nil {
		return false, fmt.Errorf("store vectors of chat %d: %w", chat, err)
	}
	return true, nil
}

// charge counts tokens in the day's budget, shared among the batch's people by the
// length of their texts.
func (m *Memory) charge(p pending, tokens int) {
	if m.meter == nil || tokens <= 0 {
		return
	}
	total := 0
	for _, t := range p.texts {
		total += len(t)
	}
	by := map[int64]int{}
	left := tokens
	for i, t := range p.texts {
		n := tokens * len(t) / max(total, 1)
		by[p.users[i]] += n
		left -= n
	}
	if len(p.users) > 0 {
		by[p.users[0]] += left // what rounding left over
	}
	for u, n := range by {
		if n > 0 {
			m.meter.Charge(u, n)
		}
	}
}

// queryVector embeds query for a Recall of chat by user within the query timeout, if
// chat has vectors of the embedder and the user's share allows; nil otherwise.
func (m *Memory) queryVector(ctx context.Context, chat, user int64, query string) []float32 {
	em := m.embed
	if !em.usable() || m.meter != nil && !m.meter.Allowed(user) {
		return nil
	}
	has, err := viewed(m.st, func(tx Tx) (bool, error) {
		st, err := loadVecStats(tx, chat)
		return st.Embedder == em.e.ID() && len(st.Blocks) > 0, err
	})
	if err != nil || !has {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, em.timeout)
	defer cancel()
	vecs, tokens, err := em.embed(rctx, "query", []string{brain.TruncateRunes(query, embedTextRunes)})
	if err != nil {
		return nil
	}
	if m.meter != nil && tokens > 0 {
		m.meter.Charge(user, tokens)
	}
	return normalized(vecs[0])
}
