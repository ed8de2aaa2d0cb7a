package loop

import "github.com/anima-bot/anima/brain"

// repeats reports whether text is too similar to one of the chat's recent messages
// (word-trigram Jaccard ≥ 0.5 with one of the last DuplicateWindow assistant turns).
// Proactive messages and follow-ups that repeat are not sent.
func (l *Loop) repeats(chat int64, text string) bool {
	turns, err := l.deps.Journal.Recent(chat, 2*l.cfg.DuplicateWindow)
	if err != nil {
		l.log.Warn("read recent messages", "err", err)
		return false
	}
	said := brain.Trigrams(text)
	seen := 0
	for i := len(turns) - 1; i >= 0 && seen < l.cfg.DuplicateWindow; i-- {
		if turns[i].Role != "assistant" {
			continue
		}
		seen++
		if brain.Jaccard(said, brain.Trigrams(turns[i].Text)) >= 0.5 {
			return true
		}
	}
	return false
}
