package aggregation

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

// TestNextProactiveMatchesDecide: for each relationship state, stepping the aggregator
// minute by minute under a simulated clock makes its first proactive wake exactly when
// NextProactive said (at the first step not before it), or never when it said never.
func TestNextProactiveMatchesDecide(t *testing.T) {
	t.Parallel()
	berlin := braintest.Zone(t, "Europe/Berlin")
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, berlin) // a Monday morning
	today := start.Format("2006-01-02")
	h := time.Hour
	const chat = 7
	deferred := func(until time.Time, value float64, firm bool) brain.Ack {
		return brain.Ack{Key: ProactiveKey(chat), Kind: brain.AckDeferred, Until: until, Value: value, Firm: firm, At: start}
	}
	tests := []struct {
		name   string
		policy func(*brain.ProactivePolicy)
		start  time.Time // default start
		rel    brain.Relationship
		acks   []brain.Ack
		never  bool
	}{
		{name: "active, due after min_silence", rel: brain.Relationship{LastUserMsg: start.Add(-h), Status: brain.StatusActive}},
		{name: "due now", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h), Status: brain.StatusIdle}},
		{name: "awaiting answer: the follow-up", rel: brain.Relationship{LastAgentMsg: start.Add(-5 * time.Minute), Status: brain.StatusAwaitingAnswer}},
		{name: "awaiting answer, follow-up done", rel: brain.Relationship{LastAgentMsg: start.Add(-h), Status: brain.StatusAwaitingAnswer,
			FollowupDone: true, UnansweredProactive: 1, LastProactive: start.Add(-h)}},
		{name: "closed", rel: brain.Relationship{LastUserMsg: start, Status: brain.StatusClosed}},
		{name: "habituated", rel: brain.Relationship{LastAgentMsg: start.Add(-h), UnansweredProactive: 3, LastProactive: start.Add(-h)}},
		{name: "habituated into quiet hours", rel: brain.Relationship{LastAgentMsg: start.Add(-11 * h), UnansweredProactive: 2,
			LastProactive: start.Add(-11 * h)}}, // due at 23:00
		{name: "habituated out of reach", rel: brain.Relationship{LastUserMsg: start, Status: brain.StatusClosed, UnansweredProactive: 61}, never: true},
		{name: "cooldown", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h), LastProactive: start.Add(-h), ProactiveToday: 1, ProactiveDay: today}},
		{name: "deferred by /quiet", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)}, acks: []brain.Ack{deferred(start.Add(5*h), 0.6, true)}},
		{name: "deferral overridden by pressure", rel: brain.Relationship{LastUserMsg: start.Add(-6 * h)},
			acks: []brain.Ack{deferred(start.Add(20*h), 0.5, false)}}, // pressure 0.75 at 12 h of silence
		{name: "deferral overridden between minutes", rel: brain.Relationship{LastUserMsg: start.Add(-6 * h)},
			acks: []brain.Ack{deferred(start.Add(20*h), 0.6, false)}},
		{name: "deferral expires before the override", rel: brain.Relationship{LastUserMsg: start.Add(-6 * h)},
			acks: []brain.Ack{deferred(start.Add(2*h), 0.7, false)}},
		{name: "handled after the last exchange", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)},
			acks: []brain.Ack{{Key: ProactiveKey(chat), Kind: brain.AckHandled, At: start}}},
		{name: "handled before the last exchange", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)},
			acks: []brain.Ack{{Key: ProactiveKey(chat), Kind: brain.AckHandled, At: start.Add(-8 * h)}}},
		{name: "suppressed", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)},
			acks: []brain.Ack{{Key: ProactiveKey(chat), Kind: brain.AckSuppressed, At: start}}, never: true},
		{name: "another chat's ack", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)},
			acks: []brain.Ack{{Key: ProactiveKey(chat + 1), Kind: brain.AckSuppressed, At: start}}},
		{name: "max_per_day reached", rel: brain.Relationship{LastUserMsg: start.Add(-9 * h), LastProactive: start.Add(-4 * h),
			ProactiveToday: 2, ProactiveDay: today}},
		{name: "max_per_day reached yesterday", rel: brain.Relationship{LastUserMsg: start.Add(-30 * h), LastProactive: start.Add(-20 * h),
			ProactiveToday: 2, ProactiveDay: start.AddDate(0, 0, -1).Format("2006-01-02")}},
		{name: "inside quiet hours", start: time.Date(2026, 3, 2, 23, 0, 0, 0, berlin),
			rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)}},
		{name: "inside quiet hours in the user's own zone", // 10:00 in Berlin is 04:00 in New York
			rel: brain.Relationship{LastUserMsg: start.Add(-30 * h), Timezone: "America/New_York"}},
		{name: "quiet hours, then the day's cap", start: time.Date(2026, 3, 2, 23, 0, 0, 0, berlin),
			rel: brain.Relationship{LastUserMsg: start.Add(-7 * h), LastProactive: start.Add(9 * h), ProactiveToday: 2, ProactiveDay: today}},
		{name: "dormant", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h), Dormant: true}, never: true},
		{name: "group", rel: brain.Relationship{LastUserMsg: start.Add(-7 * h), Group: true}, never: true},
		{name: "no exchange yet", rel: brain.Relationship{}, never: true},
		{name: "proactive disabled", policy: func(p *brain.ProactivePolicy) { p.Enabled = false },
			rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)}, never: true},
		{name: "max_per_day 0", policy: func(p *brain.ProactivePolicy) { p.MaxPerDay = 0 },
			rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)}, never: true},
		{name: "no quiet hours", policy: func(p *brain.ProactivePolicy) { p.QuietHours = brain.QuietHours{} },
			start: time.Date(2026, 3, 2, 23, 0, 0, 0, berlin), rel: brain.Relationship{LastUserMsg: start.Add(-7 * h)}},
	}
	const horizon = 8 * 24 * time.Hour
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := brain.DefaultProactivePolicy()
			if tc.policy != nil {
				tc.policy(&pol)
			}
			now := start
			if !tc.start.IsZero() {
				now = tc.start
			}
			a := New(pol, Options{})
			st := brain.NewState(berlin)
			tc.rel.Chat, tc.rel.User = chat, chat
			rel := st.Upsert(tc.rel)
			for _, ack := range tc.acks {
				a.Ack(ack)
			}
			next, ok := a.NextProactive(now, rel, st.Location(rel), a.Acks(now))
			if ok == tc.never {
				t.Fatalf("NextProactive = %v, %v; want never=%v", next, ok, tc.never)
			}
			var buf []brain.Wake
			var first time.Time
		steps:
			for at := now; at.Before(now.Add(horizon)); at = at.Add(time.Minute) {
				buf = a.Decide(at, st, nil, buf[:0])
				for _, w := range buf {
					if w.Chat == chat && (w.Reason.Code == brain.ReasonProactive || w.Reason.Code == brain.ReasonFollowup) {
						first = at
						break steps
					}
				}
			}
			loc := st.Location(rel)
			if !ok {
				if !first.IsZero() {
					t.Fatalf("NextProactive says never, Decide woke the chat at %s", first.In(loc))
				}
				return
			}
			// The first step not before next.
			want := now.Add((next.Sub(now) + time.Minute - 1) / time.Minute * time.Minute)
			if !first.Equal(want) {
				t.Fatalf("first proactive wake at %s, NextProactive said %s (step %s)", first.In(loc), next.In(loc), want.In(loc))
			}
			t.Logf("first proactive wake %s", next.In(loc).Format("Mon 15:04:05 MST"))
		})
	}
}

// TestNextProactiveFollowsHabituation: the earliest time uses min_silence × 2^unanswered,
// with no cap, and is never when that is out of reach.
func TestNextProactiveFollowsHabituation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	a := New(brain.ProactivePolicy{Enabled: true, MinSilence: time.Hour, MaxPerDay: 2}, Options{})
	for _, tc := range []struct {
		name       string
		status     brain.ConversationStatus
		unanswered int
		want       time.Time
		wantOK     bool
	}{
		{"habituated", brain.StatusIdle, 2, now.Add(4 * time.Hour), true},
		{"past the old cap of 16", brain.StatusIdle, 17, now.Add(time.Hour << 17), true},
		{"out of reach", brain.StatusClosed, 20, time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel := brain.Relationship{Chat: 1, LastUserMsg: now, Status: tc.status, UnansweredProactive: tc.unanswered}
			got, ok := a.NextProactive(now, &rel, time.UTC, nil)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("NextProactive = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestWakesCarryTheUserZone: every wake carries the zone looked up once in the State, so
// cognition does not look it up again.
func TestWakesCarryTheUserZone(t *testing.T) {
	t.Parallel()
	berlin, ny := braintest.Zone(t, "Europe/Berlin"), braintest.Zone(t, "America/New_York")
	now := time.Date(2026, 3, 2, 15, 0, 0, 0, berlin)
	st := brain.NewState(berlin)
	st.Upsert(brain.Relationship{Chat: 1, User: 1, Timezone: "America/New_York", LastUserMsg: now.Add(-7 * time.Hour)}) // proactive
	st.Upsert(brain.Relationship{Chat: 2, User: 2, Timezone: "America/New_York", LastUserMsg: now})                     // a message
	st.Upsert(brain.Relationship{Chat: 3, User: 3, LastUserMsg: now})                                                   // a thought
	st.Upsert(brain.Relationship{Chat: 4, User: 4, Timezone: "Not/AZone", LastUserMsg: now})                            // a message
	st.Thoughts = []brain.Thought{{Chat: 3, Text: "ask about the exam", At: now}}
	a := New(noQuiet(), Options{})
	ws := a.Decide(now, st, []brain.Signal{
		{Type: brain.SignalUserMessage, Chat: 2, User: 2, Text: "hi", At: now},
		{Type: brain.SignalUserMessage, Chat: 4, User: 4, Text: "hi", At: now},
		{Type: brain.SignalUserMessage, Chat: 9, User: 9, Text: "new here", At: now}, // no relationship
	}, nil)
	want := map[int64]*time.Location{1: ny, 2: ny, 3: berlin, 4: berlin, 9: berlin}
	if len(ws) != len(want) {
		t.Fatalf("wakes %+v, want one for each of %v", ws, want)
	}
	for _, w := range ws {
		if w.Loc.String() != want[w.Chat].String() {
			t.Errorf("chat %d (%s): Loc %v, want %v", w.Chat, w.Reason.Code, w.Loc, want[w.Chat])
		}
	}
}
