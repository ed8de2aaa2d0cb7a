package prompt

import (
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

// Query is the memory search of a proactive wake w, given its recalled turns and the
// plugins' sections: most telling first, as memory reads only the query's first terms.
func Query(w brain.Wake, turns []brain.Turn, secs []brain.Section) string {
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
	return TruncateUTF8(strings.Join(parts, "\n"), maxQueryBytes)
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
