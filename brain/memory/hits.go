package memory

import (
	"strconv"

	"github.com/anima-bot/anima/brain"
)

// loadHits turns ranked results into hits: a turn's text comes from history (a turn
// deleted meanwhile is left out).
func loadHits(tx Tx, chat int64, c *corpus, ranked []scored) ([]hit, error) {
	var hits []hit
	for _, r := range ranked {
		if r.doc == 0 {
			h := c.extra[r.extra]
			h.Score = r.score
			hits = append(hits, h)
			continue
		}
		var t brain.Turn
		ok, err := tx.HistoryGet(chat, r.doc, &t)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		t.Seq, t.Text = r.doc, brain.TruncateRunes(t.Text, maxDocRunes)
		hits = append(hits, hit{
			Hit:  brain.Hit{Source: sourceTurn, Text: speaker(t) + ": " + t.Text, At: t.At, Score: r.score},
			seq:  r.doc,
			turn: t,
		})
	}
	return hits, nil
}

// speaker is who said t as a hit names them: the writer's quoted name for a user turn
// whose writer is known, else the role.
func speaker(t brain.Turn) string {
	if t.Name != "" && t.Role == "user" {
		return strconv.Quote(brain.CleanName(t.Name))
	}
	return t.Role
}
