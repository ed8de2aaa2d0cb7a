package aggregation

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain"
)

func TestFirmDeferralBlocksUntilExpiry(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.run(5*time.Hour, time.Minute)
	s.agg.Ack(brain.Ack{Key: ProactiveKey(1), Kind: brain.AckDeferred, Until: s.now.Add(10 * time.Hour),
		Value: 0.44, Firm: true, Reason: "/quiet", At: s.now})
	s.run(15*time.Hour, time.Minute) // pressure climbs from 0.44 to 0.90
	s.wantFirstProactive(15*time.Hour, "the firm deferral's expiry")
}

func TestNonFirmDeferralOverride(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.MaxPerDay = 10 // two plain wakes in a day: none kept back for a check-in here
	s := newSim(t, cfg, time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.run(6*time.Hour, time.Minute) // the wake at 6 h is declined: the model acks a deferral
	if len(s.proactive()) != 1 {
		t.Fatalf("no wake at 6 h")
	}
	s.agg.Ack(brain.Ack{Key: ProactiveKey(1), Kind: brain.AckDeferred, Until: s.now.Add(20 * time.Hour),
		Value: 0.5, At: s.now})
	s.run(6*time.Hour+30*time.Minute, time.Minute)
	at := s.proactive()
	// Pressure 0.75 = 0.5 + 0.25 at a silence of 12 h: the override ends the deferral.
	if len(at) != 2 || at[1].Sub(monday) != 12*time.Hour {
		t.Fatalf("wakes %v; want the override at 12h (pressure 0.75)", at)
	}
	if _, ok := s.agg.Registry().Get(s.now, ProactiveKey(1)); ok {
		t.Error("overridden deferral still stored")
	}
}

func TestDeferralCappedAt24h(t *testing.T) {
	t.Parallel()
	r := NewAckRegistry()
	r.Ack(brain.Ack{Key: "social_pressure:7", Kind: brain.AckDeferred, Until: monday.Add(72 * time.Hour), Firm: true, At: monday})
	r.Ack(brain.Ack{Key: "social_pressure:8", Kind: brain.AckDeferred, Firm: true, At: monday}) // no Until
	acks := r.Acks(monday)
	if len(acks) != 2 || !acks[0].Until.Equal(monday.Add(24*time.Hour)) || !acks[1].Until.Equal(monday.Add(24*time.Hour)) {
		t.Fatalf("acks %+v; want both until 24h after At", acks)
	}
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.agg.Ack(brain.Ack{Key: ProactiveKey(1), Kind: brain.AckDeferred, Until: monday.Add(72 * time.Hour), Firm: true, At: monday})
	s.run(30*time.Hour, time.Minute)
	s.wantFirstProactive(24*time.Hour, "when the capped deferral ends")
}

func TestSuppressedUntilCleared(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.talk(2, brain.StatusIdle)
	s.agg.Ack(brain.Ack{Key: ProactiveKey(1), Kind: brain.AckSuppressed, Until: monday.Add(time.Hour), At: monday})
	s.run(3*24*time.Hour, time.Minute)
	for _, w := range s.wakes {
		if w.Chat == 1 {
			t.Fatalf("suppressed chat woken at %s", w.At)
		}
	}
	if len(s.wakes) == 0 {
		t.Fatal("the other chat was not woken either")
	}
	s.agg.ClearChat(1)
	if ws := s.tick(); len(ws) != 1 || ws[0].Chat != 1 || ws[0].Reason.Code != brain.ReasonProactive {
		t.Errorf("after ClearChat: %+v, want a proactive wake of chat 1", ws)
	}
}

func TestClearChat(t *testing.T) {
	t.Parallel()
	r := NewAckRegistry()
	for _, k := range []string{"social_pressure:1", "reminder:1", "social_pressure:-1001", "social_pressure:12", "energy"} {
		r.Ack(brain.Ack{Key: k, Kind: brain.AckSuppressed, At: monday})
	}
	r.ClearChat(1)
	r.ClearChat(-1001)
	var keys []string
	for _, a := range r.Acks(monday) {
		keys = append(keys, a.Key)
	}
	if len(keys) != 2 || keys[0] != "energy" || keys[1] != "social_pressure:12" {
		t.Errorf("after ClearChat(1), ClearChat(-1001): %v, want [energy social_pressure:12]", keys)
	}
}

func TestAckRegistryKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ack   brain.Ack
		now   time.Time
		at    time.Time
		value float64
		want  bool
	}{
		{"handled: the instance", brain.Ack{Kind: brain.AckHandled}, monday.Add(time.Minute), monday, 0.5, true},
		{"handled: a newer instance", brain.Ack{Kind: brain.AckHandled}, monday.Add(time.Minute), monday.Add(time.Second), 0.5, false},
		{"handled: expired after 24 h", brain.Ack{Kind: brain.AckHandled}, monday.Add(24 * time.Hour), monday, 0.5, false},
		{"deferred: before until", brain.Ack{Kind: brain.AckDeferred, Until: monday.Add(time.Hour), Value: 0.5}, monday.Add(59 * time.Minute), monday, 0.74, true},
		{"deferred: at until", brain.Ack{Kind: brain.AckDeferred, Until: monday.Add(time.Hour), Value: 0.5}, monday.Add(time.Hour), monday, 0.5, false},
		{"deferred: +0.25 overrides", brain.Ack{Kind: brain.AckDeferred, Until: monday.Add(time.Hour), Value: 0.5}, monday.Add(time.Minute), monday, 0.75, false},
		{"deferred: +0.2 does not", brain.Ack{Kind: brain.AckDeferred, Until: monday.Add(time.Hour), Value: 0.5}, monday.Add(time.Minute), monday, 0.7, true},
		{"deferred firm: +0.5 does not override", brain.Ack{Kind: brain.AckDeferred, Until: monday.Add(time.Hour), Value: 0.1, Firm: true}, monday.Add(time.Minute), monday, 0.6, true},
		{"suppressed: ignores until", brain.Ack{Kind: brain.AckSuppressed, Until: monday.Add(time.Hour)}, monday.Add(99 * time.Hour), monday, 1, true},
		{"unknown kind ignored", brain.Ack{Kind: "maybe"}, monday, monday, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewAckRegistry()
			tc.ack.Key, tc.ack.At = "plugin_alert:42", monday
			r.Ack(tc.ack)
			if got := r.Blocked(tc.now, "plugin_alert", 42, tc.at, tc.value); got != tc.want {
				t.Errorf("Blocked = %v, want %v", got, tc.want)
			}
			if r.Blocked(tc.now, "plugin_alert", 43, tc.at, tc.value) {
				t.Error("another chat is blocked")
			}
		})
	}
}

func TestAcksRestore(t *testing.T) {
	t.Parallel()
	a := New(noQuiet(), Options{})
	a.Ack(brain.Ack{Key: ProactiveKey(1), Kind: brain.AckDeferred, Until: monday.Add(5 * time.Hour), Firm: true, At: monday})
	a.Ack(brain.Ack{Key: ProactiveKey(2), Kind: brain.AckSuppressed, At: monday})
	a.Ack(brain.Ack{Key: ProactiveKey(3), Kind: brain.AckDeferred, Until: monday.Add(time.Hour), At: monday})
	saved := a.Acks(monday.Add(2 * time.Hour)) // the 1-hour deferral has expired
	if len(saved) != 2 {
		t.Fatalf("live acks %+v, want 2", saved)
	}
	b := New(noQuiet(), Options{})
	for _, ack := range saved {
		b.Ack(ack)
	}
	now := monday.Add(3 * time.Hour)
	for chat, want := range map[int64]bool{1: true, 2: true, 3: false} {
		if got := b.Blocked(now, brain.Signal{Type: brain.SignalSocialPressure, Chat: chat, Value: 1}); got != want {
			t.Errorf("restored chat %d blocked = %v, want %v", chat, got, want)
		}
	}
}

func TestHandledCoversTheSilence(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.run(6*time.Hour, time.Minute)
	s.agg.Ack(brain.Ack{Key: ProactiveKey(1), Kind: brain.AckHandled, At: s.now})
	s.run(12*time.Hour, time.Minute)
	if n := len(s.proactive()); n != 1 {
		t.Errorf("%d proactive wakes; a handled ack should cover the rest of this silence", n)
	}
}

func TestRuleOneFolds(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle).Name = "Anna"
	s.st.Energy = 0.1 // rule 1 wakes whatever the energy
	ws := s.tick(
		brain.Signal{Type: brain.SignalUserMessage, Chat: 1, User: 1, Text: "hi", At: monday},
		brain.Signal{Type: brain.SignalEnergy, Source: "energy", Value: 0.1},
		brain.Signal{Type: brain.SignalUserMessage, Chat: 1, User: 1, Text: "are you there?", At: monday},
		brain.Signal{Type: brain.SignalReaction, Chat: 2, User: 2, UserName: "Ben", At: monday},
		brain.Signal{Type: brain.SignalScheduleDue, Chat: 1, User: 1, Text: "dentist", At: monday},
		brain.Signal{Type: brain.SignalScheduleDue, Chat: 3, User: 3, Text: "water the plants", At: monday},
	)
	type got struct {
		chat    int64
		code    string
		text    string
		signals int
		profile brain.Profile
	}
	want := []got{
		{1, brain.ReasonUserMessage, `Anna sent 2 messages; a scheduled item came due: "dentist"`, 3, brain.ProfileChat},
		{3, brain.ReasonSchedule, `a scheduled item came due: "water the plants"`, 1, brain.ProfileChat},
	}
	if len(ws) != len(want) {
		t.Fatalf("wakes %+v", ws)
	}
	for i, w := range ws {
		g := got{w.Chat, w.Reason.Code, w.Reason.Text, len(w.Signals), w.Profile}
		if g != want[i] {
			t.Errorf("wake %d = %+v, want %+v", i, g, want[i])
		}
	}
	if ws[0].Rel.Name != "Anna" || ws[0].User != 1 {
		t.Errorf("wake carries rel %+v user %d", ws[0].Rel, ws[0].User)
	}
}

func TestThoughtWake(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.talk(2, brain.StatusIdle)
	s.st.Upsert(brain.Relationship{Chat: -5, User: 9, Group: true})
	s.st.Energy = 0.1
	s.st.Thoughts = []brain.Thought{
		{Chat: 1, Text: "ask about the exam", At: monday},
		{Chat: 1, Text: "send the recipe", At: monday},
		{Chat: 2, Text: "done already", At: monday, Handled: true},
		{Chat: -5, Text: "group: never first", At: monday},
		{Chat: 0, Text: "agent-wide", At: monday},
		{Chat: 2, Text: "but a user message comes first", At: monday},
	}
	ws := s.tick(brain.Signal{Type: brain.SignalUserMessage, Chat: 2, User: 2, At: monday})
	if len(ws) != 2 || ws[0].Chat != 2 || ws[0].Reason.Code != brain.ReasonUserMessage {
		t.Fatalf("wakes %+v", ws)
	}
	w := ws[1]
	if w.Chat != 1 || w.Reason.Code != brain.ReasonThought || len(w.Signals) != 2 || w.Profile != brain.ProfileProactive ||
		w.Reason.Text != "I have 2 pending thoughts about this chat" || w.Signals[1].Text != "send the recipe" {
		t.Errorf("thought wake %+v", w)
	}
}

func TestLowEnergyStopsProactive(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle)
	s.st.Energy = 0.19
	s.run(12*time.Hour, time.Minute)
	if len(s.wakes) != 0 {
		t.Fatalf("%d wakes at energy 0.19", len(s.wakes))
	}
	s.st.Energy = 0.2
	if ws := s.tick(); len(ws) != 1 {
		t.Errorf("at energy 0.2: %+v, want a proactive wake", ws)
	}
}

func TestSkippedRelationships(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.talk(1, brain.StatusIdle).Group = true
	s.talk(2, brain.StatusIdle).Dormant = true
	s.st.Upsert(brain.Relationship{Chat: 3, User: 3}) // never talked
	s.run(3*24*time.Hour, time.Minute)
	if len(s.wakes) != 0 {
		t.Errorf("wakes %+v; groups, dormant chats and chats without an exchange are never contacted first", s.wakes)
	}
}

func TestProactiveDayRollover(t *testing.T) {
	t.Parallel()
	a := New(noQuiet(), Options{})
	st := brain.NewState(time.UTC)
	rel := st.Upsert(brain.Relationship{Chat: 1, User: 1, LastUserMsg: monday.Add(-7 * time.Hour),
		ProactiveToday: 2, ProactiveDay: "2026-03-02", LastProactive: monday.Add(-24 * time.Hour)})
	if ws := a.Decide(monday, st, nil, nil); len(ws) != 0 {
		t.Errorf("2 wakes already today: %+v", ws)
	}
	rel.ProactiveDay = "2026-03-01"
	if ws := a.Decide(monday, st, nil, nil); len(ws) != 1 {
		t.Errorf("2 wakes yesterday, none today: %+v, want a wake", ws)
	}
	if rel.ProactiveToday != 2 || rel.LastProactive != monday.Add(-24*time.Hour) {
		t.Error("Decide changed the relationship's bookkeeping")
	}
}

func TestTimezoneOverride(t *testing.T) {
	t.Parallel()
	cfg := brain.DefaultProactivePolicy()
	cfg.MinSilence = time.Hour
	a := New(cfg, Options{})
	st := brain.NewState(time.UTC)
	st.Upsert(brain.Relationship{Chat: 1, User: 1, LastUserMsg: monday.Add(-2 * time.Hour), Timezone: "Asia/Tokyo"})
	st.Upsert(brain.Relationship{Chat: 2, User: 2, LastUserMsg: monday.Add(-2 * time.Hour), Timezone: "Not/AZone"})
	// 10:00 UTC is 19:00 in Tokyo; 23:00 UTC is 08:00 in Tokyo (quiet) and 23:00 UTC for chat 2.
	if ws := a.Decide(monday, st, nil, nil); len(ws) != 2 {
		t.Fatalf("10:00 UTC: %+v, want both chats", ws)
	}
	late := monday.Add(13 * time.Hour)
	if ws := a.Decide(late, st, nil, nil); len(ws) != 0 {
		t.Errorf("23:00 UTC / 08:00 Tokyo: %+v, want none (both in quiet hours)", ws)
	}
	// The hour after quiet hours is left alone: the user was never seen in it.
	if ws := a.Decide(late.Add(30*time.Minute), st, nil, nil); len(ws) != 0 {
		t.Errorf("08:30 Tokyo: %+v, want none (the hour after quiet hours)", ws)
	}
	if ws := a.Decide(late.Add(90*time.Minute), st, nil, nil); len(ws) != 1 || ws[0].Chat != 1 {
		t.Errorf("09:30 Tokyo: %+v, want chat 1", ws)
	}
}

func TestBuckets(t *testing.T) {
	a := New(noQuiet(), Options{})
	st := brain.NewState(time.UTC)
	k := BucketKey{Type: brain.SignalSocialPressure, Source: "social_pressure", Chat: 7}
	feed := func(min int, v float64) {
		now := monday.Add(time.Duration(min) * time.Minute)
		a.Decide(now, st, []brain.Signal{{Type: k.Type, Source: k.Source, Chat: 7, Value: v, At: now}}, nil)
	}
	for i, v := range []float64{0.30, 0.50, 0.20, 0.40, 0.45, 0.60} { // one a minute, minutes 0..5
		feed(i, v)
	}
	b, ok := a.Bucket(monday.Add(5*time.Minute), k)
	// The 5-minute window at minute 5 holds minutes 1..5.
	want := Bucket{Key: k, Latest: 0.60, At: monday.Add(5 * time.Minute), Min: 0.20, Max: 0.60, Trend: 0.60 - 0.50, Count: 5}
	if !ok || b.Latest != want.Latest || b.Min != want.Min || b.Max != want.Max || !near(b.Trend, want.Trend) || b.Count != want.Count || !b.At.Equal(want.At) {
		t.Errorf("bucket %+v, want %+v", b, want)
	}
	b, _ = a.Bucket(monday.Add(20*time.Minute), k)
	if b.Count != 0 || b.Latest != 0.60 {
		t.Errorf("15 min later: %+v, want an empty window that still knows the latest value", b)
	}
	now := monday.Add(5 * time.Minute)
	allocs := testing.AllocsPerRun(100, func() {
		now = now.Add(10 * time.Second)
		a.Decide(now, st, []brain.Signal{{Type: k.Type, Source: k.Source, Chat: 7, Value: 0.5, At: now}}, nil)
	})
	if allocs != 0 {
		t.Errorf("folding into an existing bucket allocates %v times", allocs)
	}
	a.Decide(now.Add(31*time.Minute), st, nil, nil) // past the 30-minute TTL
	if _, ok := a.Bucket(now.Add(31*time.Minute), k); ok {
		t.Error("bucket not pruned after its TTL")
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

// idleState has n relationships that talked recently enough that nothing is due, but
// every one of them is checked through the gates.
func idleState(n int, now time.Time) *brain.State {
	st := brain.NewState(time.UTC)
	for i := range n {
		st.Upsert(brain.Relationship{Chat: int64(i + 1), User: int64(i + 1), Status: brain.StatusIdle,
			LastUserMsg: now.Add(-time.Hour - time.Duration(i%3600)*time.Second)})
	}
	return st
}

func TestDecideIdleAllocs(t *testing.T) {
	a := New(brain.DefaultProactivePolicy(), Options{})
	st := idleState(1000, monday)
	a.Ack(brain.Ack{Key: ProactiveKey(5), Kind: brain.AckSuppressed, At: monday})
	now := monday
	var out []brain.Wake
	allocs := testing.AllocsPerRun(100, func() {
		now = now.Add(time.Second)
		out = a.Decide(now, st, nil, out[:0])
	})
	if allocs != 0 || len(out) != 0 {
		t.Errorf("idle Decide: %v allocs, %d wakes; want 0, 0", allocs, len(out))
	}
}

// BenchmarkDecideIdle10k is one Decide over 10,000 idle relationships.
func BenchmarkDecideIdle10k(b *testing.B) {
	benchDecide(b, New(brain.DefaultProactivePolicy(), Options{}), idleState(10_000, monday), monday, time.Millisecond)
}

// benchDecide times a's Decide over st from now, moving now by step before each one, and
// fails unless the last woke nobody; it reports the time per relationship.
func benchDecide(b *testing.B, a *Aggregator, st *brain.State, now time.Time, step time.Duration) {
	var out []brain.Wake
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(step)
		out = a.Decide(now, st, nil, out[:0])
	}
	if len(out) != 0 {
		b.Fatalf("%d wakes, want none", len(out))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(st.Rels)), "ns/relationship")
}

// BenchmarkDecideGated10k is one Decide over 10,000 relationships whose silence is long
// enough, each held back by a later gate (cooldown, quiet hours or an ack).
func BenchmarkDecideGated10k(b *testing.B) {
	const n = 10_000
	a := New(brain.DefaultProactivePolicy(), Options{})
	now := time.Date(2026, 3, 2, 23, 0, 0, 0, time.UTC) // inside quiet hours
	st := idleState(n, now.Add(-10*time.Hour))
	for _, rel := range st.Rels {
		if rel.Chat%2 == 0 {
			a.Ack(brain.Ack{Key: ProactiveKey(rel.Chat), Kind: brain.AckSuppressed, At: now})
		}
	}
	benchDecide(b, a, st, now, 0)
}

func TestSuppressionCountedOncePerHold(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	a := New(brain.DefaultProactivePolicy(), Options{Registerer: reg})
	night := time.Date(2026, 3, 2, 23, 0, 0, 0, time.UTC) // inside the default quiet hours
	st := brain.NewState(time.UTC)
	st.Upsert(brain.Relationship{Chat: 1, User: 1, LastUserMsg: night.Add(-10 * time.Hour), Status: brain.StatusIdle})
	for i := range 60 { // an hour of ticks, all held by quiet hours
		if out := a.Decide(night.Add(time.Duration(i)*time.Minute), st, nil, nil); len(out) != 0 {
			t.Fatalf("woke inside quiet hours: %+v", out)
		}
	}
	got := testutil.ToFloat64(a.suppressed[gateQuietHours])
	if got != 1 {
		t.Errorf("quiet-hours suppressions = %v after an hour of ticks, want 1 (one hold)", got)
	}
	if n, err := testutil.GatherAndCount(reg, "anima_proactive_suppressed_total"); err != nil || n != int(gateCount)-1 {
		t.Errorf("suppression series = %d, %v; want one per gate", n, err)
	}
}

// TestRuleOneKeepsGroupMembersApart: in a group only one member's consecutive signals
// fold; another member's message starts the chat's next wake, in order, each wake about
// its own sender. A private chat folds as before.
func TestRuleOneKeepsGroupMembersApart(t *testing.T) {
	t.Parallel()
	s := newSim(t, noQuiet(), time.UTC, monday)
	s.st.Upsert(brain.Relationship{Chat: -5, User: 10, Group: true}) // User: its first sender
	msg := func(chat, user int64, name, text string) brain.Signal {
		return brain.Signal{Type: brain.SignalUserMessage, Chat: chat, User: user, UserName: name, Text: text, At: monday}
	}
	ws := s.tick(
		msg(-5, 10, "Ann", "one"),
		msg(-5, 10, "Ann", "two"),
		msg(-5, 20, "Ben", "three"),
		msg(-5, 10, "Ann", "four"),
	)
	type got struct {
		user  int64
		text  string
		texts string
	}
	want := []got{{10, "Ann sent 2 messages", "one two"}, {20, "Ben sent 1 message", "three"}, {10, "Ann sent 1 message", "four"}}
	if len(ws) != len(want) {
		t.Fatalf("%d wakes, want %d: %+v", len(ws), len(want), ws)
	}
	for i, w := range ws {
		var texts []string
		for _, sig := range w.Signals {
			if sig.User != w.User {
				t.Errorf("wake %d for user %d carries a signal of user %d", i, w.User, sig.User)
			}
			texts = append(texts, sig.Text)
		}
		if g := (got{w.User, w.Reason.Text, strings.Join(texts, " ")}); g != want[i] {
			t.Errorf("wake %d = %+v, want %+v", i, g, want[i])
		}
	}

	// A group wake never takes the relationship's first sender as its user.
	ws = s.tick(brain.Signal{Type: brain.SignalScheduleDue, Chat: -5, Text: "old item", At: monday})
	if len(ws) != 1 || ws[0].User != 0 {
		t.Errorf("a group wake without a sender got user %d, want 0", ws[0].User)
	}
}

// TestGatedThoughtObeysTheGates: a gated thought (a concern's check-in) wakes its chat with
// its own reason only when every proactive gate passes; a held one stays pending.
func TestGatedThoughtObeysTheGates(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	pol := brain.DefaultProactivePolicy()
	pol.QuietHours = brain.QuietHours{}
	for _, tc := range []struct {
		name  string
		setup func(a *Aggregator, rel *brain.Relationship, pol *brain.ProactivePolicy)
		wake  bool
	}{
		{"all gates pass", func(*Aggregator, *brain.Relationship, *brain.ProactivePolicy) {}, true},
		{"cooldown", func(_ *Aggregator, r *brain.Relationship, _ *brain.ProactivePolicy) {
			r.LastProactive = now.Add(-time.Minute)
		}, false},
		{"firm deferral", func(a *Aggregator, _ *brain.Relationship, _ *brain.ProactivePolicy) {
			a.Ack(brain.Ack{Key: ProactiveKey(1), Kind: brain.AckDeferred, Firm: true, Until: now.Add(time.Hour), At: now})
		}, false},
		{"dormant (blocked)", func(_ *Aggregator, r *brain.Relationship, _ *brain.ProactivePolicy) { r.Dormant = true }, false},
		{"daily cap", func(_ *Aggregator, r *brain.Relationship, _ *brain.ProactivePolicy) {
			r.ProactiveToday, r.ProactiveDay = 2, "2025-03-03"
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(pol, Options{Registerer: prometheus.NewRegistry()})
			st := brain.NewState(time.UTC)
			rel := st.Upsert(brain.Relationship{Chat: 1, User: 1, LastUserMsg: now.Add(-time.Minute)})
			tc.setup(a, rel, &pol)
			st.Thoughts = []brain.Thought{{Chat: 1, Text: "driving test", Gated: true, Reason: brain.ReasonConcernCheckin, At: now}}
			ws := a.Decide(now, st, nil, nil)
			if got := len(ws) == 1 && ws[0].Gated && ws[0].Reason.Code == brain.ReasonConcernCheckin; got != tc.wake {
				t.Errorf("wakes = %+v, want a concern_checkin wake: %v", ws, tc.wake)
			}
			if len(st.Thoughts) != 1 {
				t.Errorf("the aggregator dropped the thought; only a dispatched wake consumes it")
			}
		})
	}
	t.Run("quiet hours", func(t *testing.T) {
		p := pol
		p.QuietHours = brain.DefaultProactivePolicy().QuietHours // 22:30-08:30
		a := New(p, Options{Registerer: prometheus.NewRegistry()})
		st := brain.NewState(time.UTC)
		st.Upsert(brain.Relationship{Chat: 1, User: 1, LastUserMsg: now.Add(-time.Hour)})
		st.Thoughts = []brain.Thought{{Chat: 1, Text: "x", Gated: true, Reason: brain.ReasonConcernCheckin}}
		night := time.Date(2025, 3, 3, 23, 0, 0, 0, time.UTC)
		if ws := a.Decide(night, st, nil, nil); len(ws) != 0 {
			t.Errorf("woke inside quiet hours: %+v", ws)
		}
		if ws := a.Decide(night.Add(10*time.Hour), st, nil, nil); len(ws) != 0 {
			t.Errorf("woke in the hour after quiet hours, the user never seen then: %+v", ws)
		}
		if ws := a.Decide(night.Add(11*time.Hour), st, nil, nil); len(ws) != 1 {
			t.Errorf("held check-in did not wake after quiet hours: %+v", ws)
		}
	})
}
