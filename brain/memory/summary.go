package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// Maintain folds chat's older turns into its summary when more than SummarizeAfter turns
// are not yet covered by it: all of them but the last RecentTurns go to one Summarize
// call together with the previous summary (at most 400 turns a call; a longer backlog
// takes several calls). Below the threshold it does nothing, so the summary is not
// recomputed on every turn. A concurrent Maintain of the same chat returns at once.
// Errors are the Summarizer's or the store's; the summary is then unchanged.
//
// First it folds the search index's unfolded turns into segments once enough have
// gathered (see index.go), so that work stays out of the turn's commit, and, with an
// embedder, embeds the turns that have no vector yet once enough have gathered
// (embedding.go).
func (m *Memory) Maintain(ctx context.Context, chat int64) error {
	if err := m.foldAll(chat); err != nil {
		return err
	}
	if err := m.embedTurns(ctx, chat); err != nil {
		return err
	}
	if m.sum == nil {
		return nil
	}
	m.mu.Lock()
	if m.summarizing[chat] {
		m.mu.Unlock()
		return nil
	}
	m.summarizing[chat] = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.summarizing, chat)
		m.mu.Unlock()
	}()

	var prev summary
	var pending []brain.Turn // newest first
	err := m.st.View(func(tx Tx) error {
		var err error
		if prev, err = m.loadSummary(tx, chat); err != nil {
			return err
		}
		// Count first: most turns leave the threshold uncrossed, and then nothing needs
		// decoding (this runs after every turn).
		n := 0
		if err := tx.HistoryReverse(chat, func(k, _ []byte) error {
			if historySeq(k) <= prev.Through {
				return brain.ErrStop
			}
			n++
			return nil
		}); err != nil || n <= m.after {
			return err
		}
		pending, err = turnsAfter(tx, chat, prev.Through)
		return err
	})
	if err != nil {
		return fmt.Errorf("maintain chat %d: %w", chat, err)
	}
	if len(pending) <= m.after {
		return nil
	}
	fold := pending[m.recent:]
	slices.Reverse(fold)
	fold = fold[:min(len(fold), maxFold)]

	text, err := m.sum.Summarize(ctx, prev.Text, fold)
	if err != nil {
		m.metrics.summaries.WithLabelValues("error").Inc()
		return fmt.Errorf("summarize %d turns of chat %d: %w", len(fold), chat, err)
	}
	text = brain.TruncateRunes(strings.TrimSpace(text), maxSummaryRunes)
	if text == "" {
		m.metrics.summaries.WithLabelValues("error").Inc()
		return fmt.Errorf("summarize %d turns of chat %d: empty summary", len(fold), chat)
	}
	next := summary{Text: text, Through: fold[len(fold)-1].Seq, At: m.clock.Now()}
	err = m.st.Update(func(tx Tx) error {
		cur, err := m.loadSummary(tx, chat)
		if err != nil {
			return err
		}
		if cur.Through != prev.Through {
			return nil // summarised meanwhile
		}
		// A chat forgotten meanwhile has lost its history: do not resurrect its summary.
		if raw, err := tx.HistoryRaw(chat, next.Through); err != nil || raw == nil {
			return err
		}
		return tx.Put(brain.BucketSummaries, brain.ID64(chat), next)
	})
	if err != nil {
		return fmt.Errorf("save summary of chat %d: %w", chat, err)
	}
	m.metrics.summaries.WithLabelValues("ok").Inc()
	m.log.Debug("summarised", "chat", chat, "turns", len(fold), "through_seq", next.Through)
	return nil
}
