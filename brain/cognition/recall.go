package cognition

import (
	"context"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// What memory is searched for. A user's message is its own query. A proactive wake (a
// check-in, a follow-up, missing them) has no words of the user's, and its reason text
// ("17h29m since we last talked; pressure 0.87") matches nothing worth saying; it searches
// for what the run might talk about instead: the thoughts that woke it (a check-in's
// concern), the concerns in the plugins' sections, the open thread (anima's last message
// when it awaits an answer) and the last conversation's topics (the user's last turns).

// topicTurns is how many of the user's last turns a proactive query takes.
const topicTurns = 3

// maxQueryBytes bounds a proactive query (memory reads its first 32 terms anyway).
const maxQueryBytes = 1200

// remember gathers what a run shows besides the wake: the plugins' sections and the memory
// recalled for w (none when recall fails: the run goes on without memory).
func (c *Cognition) remember(ctx context.Context, w brain.Wake) brain.Recall {
	var secs []brain.Section
	if c.sects != nil {
		secs = c.sects(w, c.clock.Now())
	}
	var rc brain.Recall
	if c.mem != nil {
		var err error
		rc, err = c.recall(ctx, w, secs)
		if err != nil {
			c.log.Warn("recall failed, thinking without memory", "chat", w.Chat, "err", err)
			rc = brain.Recall{}
		}
	}
	rc.Sections = secs
	return rc
}

// recall gathers the run's memory for w, the plugins' sections already in hand.
func (c *Cognition) recall(ctx context.Context, w brain.Wake, secs []brain.Section) (brain.Recall, error) {
	if q := userText(w); q != "" || w.Profile != brain.ProfileProactive {
		if q == "" {
			q = w.Reason.Text
		}
		return c.mem.Recall(ctx, w.Chat, w.User, q, c.cfg.ContextTokens)
	}
	// The turns first (no search), then the search on what they and the sections are about.
	rc, err := c.mem.Recall(ctx, w.Chat, w.User, "", c.cfg.ContextTokens)
	if err != nil {
		return rc, err
	}
	q := topicQuery(w, rc.Turns, secs)
	if q == "" {
		return rc, nil
	}
	return c.mem.Recall(ctx, w.Chat, w.User, q, c.cfg.ContextTokens)
}

// topicQuery is the search of a proactive wake: most telling first, as memory reads only
// the query's first terms.
func topicQuery(w brain.Wake, turns []brain.Turn, secs []brain.Section) string {
	var parts []string
	for _, s := range w.Signals {
		if s.Type != brain.SignalUserMessage && strings.TrimSpace(s.Text) != "" {
			parts = append(parts, s.Text) // a check-in's concern, a scheduled note, a thought
		}
	}
	for _, sec := range secs {
		for _, l := range sec.Lines {
			if t := topicOfLine(l); t != "" {
				parts = append(parts, t)
			}
		}
	}
	if w.Rel.Status == brain.StatusAwaitingAnswer {
		for i := len(turns) - 1; i >= 0; i-- {
			if turns[i].Role == "assistant" {
				parts = append(parts, turns[i].Text) // the question left open
				break
			}
		}
	}
	n := 0
	for i := len(turns) - 1; i >= 0 && n < topicTurns; i-- {
		if turns[i].Role == "user" && strings.TrimSpace(turns[i].Text) != "" {
			parts = append(parts, turns[i].Text)
			n++
		}
	}
	return truncateUTF8(strings.Join(parts, "\n"), maxQueryBytes)
}

// topicOfLine is what a section line is about, its bookkeeping left out: a concern line
// ("concern: driving test — mentioned on Tuesday, for Friday; latest: …; you mean to ask
// …") gives its summary and news, a due check-in ("due check-in: X (mentioned …)") its X,
// a journal line or the concerns' ids nothing (anima's own words about the day, which the
// turns already hold), any other line itself.
func topicOfLine(l string) string {
	l = strings.TrimSpace(l)
	switch {
	case strings.HasPrefix(l, "journal,"), strings.HasPrefix(l, "ids for "):
		return ""
	case strings.HasPrefix(l, "due check-in: "):
		l = strings.TrimPrefix(l, "due check-in: ")
		if i := strings.LastIndex(l, " (mentioned"); i >= 0 {
			l = l[:i]
		}
	case strings.HasPrefix(l, "concern: "):
		l = strings.TrimPrefix(l, "concern: ")
		summary, rest, _ := strings.Cut(l, " — mentioned ")
		l = summary
		if _, news, ok := strings.Cut(rest, "; latest: "); ok {
			news, _, _ = strings.Cut(news, "; you ")
			l += " " + news
		}
	}
	return l
}
