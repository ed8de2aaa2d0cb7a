package autonomic

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestThoughtPressureShares: a live share raises thought pressure for its chat once per
// ShareAgain, never while it waits as a gated thought, for a group or dormant chat, after
// an unanswered first message, or once expired.
func TestThoughtPressureShares(t *testing.T) {
	t.Parallel()
	share := brain.Share{ID: "s1", Text: "the heron by the canal", TiedTo: "their walk", At: t0, Expires: t0.Add(48 * time.Hour)}
	for _, tc := range []struct {
		name    string
		rel     brain.Relationship
		thought *brain.Thought // pending in the state
		at      time.Duration
		want    bool
	}{
		{"live share", brain.Relationship{}, nil, time.Hour, true},
		{"expired", brain.Relationship{}, nil, 48 * time.Hour, false},
		{"group", brain.Relationship{Group: true}, nil, time.Hour, false},
		{"dormant", brain.Relationship{Dormant: true}, nil, time.Hour, false},
		{"unanswered opener", brain.Relationship{UnansweredProactive: 1}, nil, time.Hour, false},
		{"waiting as a gated thought", brain.Relationship{}, &brain.Thought{Chat: 7, Gated: true, Ref: "s1"}, time.Hour, false},
		{"raised an hour ago", brain.Relationship{Self: &brain.Self{Shares: []brain.Share{withRaised(share, t0)}}}, nil, time.Hour, false},
		{"raised a day ago", brain.Relationship{Self: &brain.Self{Shares: []brain.Share{withRaised(share, t0)}}}, nil, ShareAgain, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := brain.NewState(time.UTC)
			rel := tc.rel
			rel.Chat, rel.User = 7, 7
			if rel.Self == nil {
				rel.Self = &brain.Self{Shares: []brain.Share{share}}
			}
			if tc.thought != nil {
				st.Thoughts = append(st.Thoughts, *tc.thought)
			}
			r := st.Upsert(rel)
			before := r.Shares()
			n := NewThoughtPressure(ThoughtConfig{AgeUnit: time.Hour}, DefaultDetectorConfig())
			now := t0.Add(tc.at)
			s, ok := n.Check(now, st)
			raised := ok && s.Chat == 7
			if raised != tc.want {
				t.Fatalf("raised = %v (%+v), want %v", raised, s, tc.want)
			}
			if !raised {
				return
			}
			if s.Type != brain.SignalThoughtPressure || s.Text != share.Text || s.Ref != "s1" || s.Detail != brain.ReasonThought {
				t.Errorf("signal %+v", s)
			}
			if !r.Shares()[0].Raised.Equal(now) {
				t.Errorf("share raised at %v, want %v", r.Shares()[0].Raised, now)
			}
			if before[0].Raised.Equal(now) {
				t.Error("the share was changed in place: a wake's snapshot shares its array")
			}
			if s, ok := n.Check(now.Add(time.Minute), st); ok && s.Chat == 7 {
				t.Errorf("raised again a minute later: %+v", s)
			}
		})
	}
}

func withRaised(s brain.Share, at time.Time) brain.Share { s.Raised = at; return s }
