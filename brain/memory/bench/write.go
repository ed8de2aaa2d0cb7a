package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

// The conversation is one-to-one: speaker A is the person (chat and user 1, as a private
// Telegram chat's id is its user's), speaker B is anima.
const (
	chat   = 1
	person = 1
)

// turnGap is the time between two turns of a session: LoCoMo dates sessions, not turns,
// and each stored turn gets a time of its own (which also tells turns apart).
const turnGap = time.Minute

// stored maps a dia_id to the time of the turn stored for it, and a stored turn's time
// back to its dia_id: times are unique within a conversation (turnGap), so they are the
// turns' identity in a Recall (a memory's At, a recent turn's At).
type stored struct {
	at   map[string]time.Time
	dia  map[int64]string // UnixNano → dia_id
	last time.Time
	n    int
}

func (s *stored) add(dia string, at time.Time) {
	s.at[dia] = at
	s.dia[at.UnixNano()] = dia
	s.last = at
	s.n++
}

// diaAt is the dia_id of the turn stored at t ("" if none).
func (s *stored) diaAt(t time.Time) string { return s.dia[t.UnixNano()] }

// clock is memory's clock during the bench: the time of the last turn written (notes of
// how they are and summaries are dated by it; questions are asked at the end).
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// write commits c's sessions into st as the service's journal does: each exchange (the
// person's turns, then anima's that follow them) is one CommitTurn with memory's IndexTx
// in its transaction, and Maintain runs after each commit. A session starts at its date
// and its turns follow turnGap apart (never before the previous session's last turn).
func write(ctx context.Context, st *storage.Store, mem *memory.Memory, clk *clock, c Conversation) (*stored, error) {
	s := &stored{at: map[string]time.Time{}, dia: map[int64]string{}}
	for _, sess := range c.Sessions {
		at := sess.At
		if !s.last.IsZero() && !at.After(s.last) {
			at = s.last.Add(turnGap)
		}
		for _, ex := range exchanges(sess.Turns, c.SpeakerA) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			turns := make([]brain.Turn, len(ex))
			for i, l := range ex {
				if _, dup := s.at[l.DiaID]; dup {
					return nil, fmt.Errorf("session_%d: dia_id %s given twice", sess.N, l.DiaID)
				}
				turns[i] = turnOf(l, c, at, i == 0)
				s.add(l.DiaID, at)
				at = at.Add(turnGap)
			}
			clk.now = s.last
			_, err := st.CommitTurn(storage.Commit{Chat: chat, User: person, Turns: turns,
				Also: func(tx *storage.Tx) error { return mem.IndexTx(tx, chat, turns) },
			}, s.last)
			if err != nil {
				return nil, fmt.Errorf("commit session_%d turns from %s: %w", sess.N, ex[0].DiaID, err)
			}
			if err := mem.Maintain(ctx, chat); err != nil {
				return nil, fmt.Errorf("maintain after session_%d turn %s: %w", sess.N, ex[len(ex)-1].DiaID, err)
			}
		}
	}
	return s, nil
}

// exchanges cuts a session's turns into what the service commits together: the person's
// turns (a burst folded into one run) with anima's answers after them; anima's turns
// before any of the person's (it wrote first) are an exchange of their own.
func exchanges(lines []Line, a string) [][]Line {
	var out [][]Line
	start := 0
	for i := 1; i <= len(lines); i++ {
		if i == len(lines) || lines[i].Speaker == a && lines[i-1].Speaker != a {
			out = append(out, lines[start:i])
			start = i
		}
	}
	return out
}

// turnOf is the stored turn of l at at: the person's words as a user turn with their
// name, anima's as its reply (as writing first when the exchange opens with it). A turn
// that shared a photo keeps its words behind "[photo]", as anima stores a photo's turn
// (the picture itself reaches only that run's prompt).
func turnOf(l Line, c Conversation, at time.Time, first bool) brain.Turn {
	text := l.Text
	if l.Photo {
		text = "[photo] " + text
	}
	if l.Speaker == c.SpeakerA {
		return brain.Turn{Role: "user", Text: text, At: at, User: person, Name: c.SpeakerA}
	}
	kind := brain.KindReply
	if first {
		kind = brain.KindProactive
	}
	return brain.Turn{Role: "assistant", Text: text, At: at, Kind: kind, User: person}
}
