package loop_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// TestLoopFoldsDueReminders: due reminders that arrive while a run of the chat is in
// flight fold into one next run, as messages do.
func TestLoopFoldsDueReminders(t *testing.T) {
	t.Parallel()
	const a = 1
	for _, tc := range []struct {
		name string
		typ  brain.SignalType
		code string
	}{
		{"due reminders", brain.SignalScheduleDue, brain.ReasonSchedule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, noProactive())
			release, _ := h.busy(a, "hi")
			for id := uint64(2); id <= 11; id++ {
				h.submit(brain.Signal{ID: id, Type: tc.typ, Source: "test", Chat: a, User: a, Text: "x", At: h.clock.Now()})
			}
			// Another chat's answer shows the loop has taken in everything submitted before.
			h.submit(h.msg(12, 2, "other"))
			recv(t, h.think.entered, "the other chat's run")
			recv(t, h.sender.attempts, "the other chat's reply")
			close(release)
			w := recv(t, h.think.entered, "the second run")
			if w.Reason.Code != tc.code || !slices.Equal(signalIDs(w), []uint64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) {
				t.Errorf("second run: reason %s, signals %v; want %s with all ten", w.Reason.Code, signalIDs(w), tc.code)
			}
			h.stop()
			if n := len(h.think.Wakes()); n != 3 {
				t.Errorf("%d runs, want 3 (two of the chat, one of the other)", n)
			}
		})
	}
}

// TestReactionsAcknowledgeWithoutRuns: reactions to anima's messages cost no model run;
// they count as the user answering (the unanswered count, the follow-up and the status
// start over), and the chat's next run carries them, its turn consuming them from the
// inbox.
func TestReactionsAcknowledgeWithoutRuns(t *testing.T) {
	t.Parallel()
	const a = 1
	h := newHarness(t, noProactive())
	h.st.Upsert(brain.Relationship{Chat: a, User: a, Status: brain.StatusAwaitingAnswer, UnansweredProactive: 2,
		FollowupDone: true, LastUserMsg: t0.Add(-48 * time.Hour), LastAgentMsg: t0.Add(-time.Hour)})
	h.start()
	for id := uint64(1); id <= 20; id++ { // as many as a chat keeps (TestReactionsCappedPerChat)
		h.submit(brain.Signal{ID: id, Type: brain.SignalReaction, Source: "test", Chat: a, User: a, Text: "❤",
			Detail: "see you at eight", MessageID: 7, At: h.clock.Now()})
	}
	// Another chat's answer shows the loop has taken in everything submitted before.
	h.submit(h.msg(31, 2, "other"))
	if w := recv(t, h.think.entered, "the other chat's run"); w.Chat != 2 {
		t.Fatalf("a run for chat %d, want none for the reactions", w.Chat)
	}
	recv(t, h.sender.attempts, "the other chat's reply")
	h.submit(h.msg(32, a, "so, tonight?"))
	w := recv(t, h.think.entered, "the chat's next run")
	if w.Reason.Code != brain.ReasonUserMessage || len(w.Signals) != 21 || w.Signals[0].ID != 32 {
		t.Fatalf("next run: reason %s, %d signals (first %d); want the message and the 20 reactions",
			w.Reason.Code, len(w.Signals), w.Signals[0].ID)
	}
	if w.Rel.UnansweredProactive != 0 || w.Rel.FollowupDone || w.Rel.Status != brain.StatusActive ||
		!w.Rel.LastUserMsg.Equal(t0) {
		t.Errorf("relationship after the reactions = %+v; want them counted as the user answering", w.Rel)
	}
	recv(t, h.sender.attempts, "the reply")
	h.stop()
	if n := len(h.think.Wakes()); n != 2 {
		t.Errorf("%d runs, want 2 (one per chat's message)", n)
	}
	// Until that run's turn, the reactions stay in the inbox (a restart submits them again).
	var done [][]uint64
	for _, rec := range h.journal.Recs() {
		if rec.Chat == a && len(rec.Done) > 0 {
			done = append(done, slices.Sorted(slices.Values(rec.Done)))
		}
	}
	if len(done) != 1 || len(done[0]) != 21 || done[0][0] != 1 || done[0][20] != 32 {
		t.Errorf("chat's commits consumed %v, want one turn consuming 1..20 and 32", done)
	}
}

// TestForgottenChatsReactionsAreConsumed: a chat's pending reactions, each quoting one of
// anima's messages, are consumed unread when the chat is forgotten, and so is a reaction
// taken in after (the chat has no relationship left to carry it to a run). They stayed
// in the inbox for good: dropped from memory, never consumed, submitted again by every
// restart.
func TestForgottenChatsReactionsAreConsumed(t *testing.T) {
	t.Parallel()
	const a = 1
	h := newHarness(t, noProactive())
	h.cmds.forget = true
	h.st.Upsert(brain.Relationship{Chat: a, User: a, Status: brain.StatusActive})
	h.start()
	react := func(id uint64) {
		h.submit(brain.Signal{ID: id, Type: brain.SignalReaction, Source: "test", Chat: a, User: a, Text: "❤",
			Detail: "echo: my bank pin is SILVERKEY 4711", MessageID: 7, At: h.clock.Now()})
	}
	react(1)
	react(2)
	h.submit(h.command(3, a, "/forget yes"))
	recv(t, h.sender.attempts, "the confirmation")
	react(4)
	consumed := map[uint64]bool{}
	for len(consumed) < 4 {
		rec := recv(t, h.journal.commits, "a commit consuming the reactions")
		for _, id := range rec.Done {
			consumed[id] = true
		}
	}
	h.stop()
	if want := []uint64{1, 2, 3, 4}; !slices.Equal(slices.Sorted(maps.Keys(consumed)), want) {
		t.Errorf("consumed %v, want %v", slices.Sorted(maps.Keys(consumed)), want)
	}
	if n := len(h.think.Wakes()); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
}

// TestReactionWithoutRelationshipIsConsumed: a reaction in a chat without a relationship
// (forgotten before a restart, which submits the inbox again) has no next run to carry
// it: it is consumed unread at once, not left in the inbox for good.
func TestReactionWithoutRelationshipIsConsumed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.start()
	h.submit(brain.Signal{ID: 1, Type: brain.SignalReaction, Source: "test", Chat: 5, User: 5, Text: "❤",
		Detail: "echo: my bank pin is SILVERKEY 4711", MessageID: 7, At: h.clock.Now()})
	rec := recv(t, h.journal.commits, "the reaction's drop")
	h.stop()
	if rec.Chat != 5 || !slices.Equal(rec.Done, []uint64{1}) || len(rec.Turns)+len(rec.Outbox) != 0 {
		t.Errorf("commit %+v, want a drop of chat 5 consuming reaction 1", rec)
	}
	if h.st.Rel(5) != nil {
		t.Error("the reaction made a relationship")
	}
}

// TestReactionsCappedPerChat: a chat keeps its latest 20 reactions for its next run; older
// ones are consumed from the inbox unread (and counted) as they are superseded, so a user
// who only reacts grows neither memory nor the inbox. A drop waiting behind a run does not
// stop later messages folding into the wake queued after it.
func TestReactionsCappedPerChat(t *testing.T) {
	t.Parallel()
	const a = 1
	h := newHarness(t, noProactive())
	reg := h.registry()
	gate := make(chan struct{}, 2)
	h.think.gateChat[a] = gate
	h.st.Upsert(brain.Relationship{Chat: a, User: a, Status: brain.StatusActive})
	h.start()
	react := func(id uint64) {
		h.submit(brain.Signal{ID: id, Type: brain.SignalReaction, Source: "test", Chat: a, User: a, Text: "❤",
			MessageID: 7, At: h.clock.Now()})
	}
	for id := uint64(1); id <= 45; id++ {
		react(id)
	}
	var dropped []uint64
	for len(dropped) < 25 {
		rec := recv(t, h.journal.commits, "a superseded reaction's drop")
		if rec.Chat != a || len(rec.Turns)+len(rec.Outbox) != 0 {
			t.Fatalf("commit %+v, want a drop consuming reactions only", rec)
		}
		dropped = append(dropped, rec.Done...)
	}
	if want := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}; !slices.Equal(dropped, want) {
		t.Fatalf("drops consumed %v, want the 25 oldest reactions, oldest first", dropped)
	}
	h.submit(h.msg(46, a, "first"))
	w := recv(t, h.think.entered, "the first run")
	if len(w.Signals) != 21 || w.Signals[0].ID != 46 || w.Signals[1].ID != 26 || w.Signals[20].ID != 45 {
		t.Fatalf("first run carries %v, want the message and reactions 26..45", signalIDs(w))
	}
	// While that run is gated: 22 more reactions (2 superseded) and two messages, which
	// fold into one queued wake behind the run, the drop ahead of it.
	for id := uint64(47); id <= 68; id++ {
		react(id)
	}
	h.submit(h.msg(69, a, "second"), h.msg(70, a, "third"))
	// The loop took in all of it.
	until(t, time.Now().Add(guard), "the messages never woke the loop", func() bool { return wakes(t, reg) >= 2 })
	gate <- struct{}{}
	recv(t, h.sender.attempts, "the first reply")
	rec := recv(t, h.journal.commits, "the first turn")
	if len(rec.Done) != 21 {
		t.Fatalf("first turn consumed %v, want the message and its 20 reactions", rec.Done)
	}
	if rec := recv(t, h.journal.commits, "the queued drop"); !slices.Equal(rec.Done, []uint64{47, 48}) {
		t.Fatalf("commit after the first turn consumed %v, want the superseded reactions 47 and 48", rec.Done)
	}
	w = recv(t, h.think.entered, "the second run")
	gate <- struct{}{}
	recv(t, h.sender.attempts, "the second reply")
	if userTexts(w) != "second|third" || len(w.Signals) != 22 || w.Signals[2].ID != 49 {
		t.Errorf("second run carries %v (%q), want both messages and reactions 49..68", signalIDs(w), userTexts(w))
	}
	h.stop()
	if n := len(h.think.Wakes()); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
	want := `# HELP anima_reactions_dropped_total Reactions consumed unread: superseded by a chat's later ones beyond the pending cap, or in a chat forgotten or without a relationship.
# TYPE anima_reactions_dropped_total counter
anima_reactions_dropped_total 27
`
	exposes(t, reg, "anima_reactions_dropped_total", want)
}

// TestLoopRateLimitsUserRuns: beyond UserRunsPerMinute a user's wakes wait, folded into
// one, until the minute allows them; the user gets one notice (no model run for it).
func TestLoopRateLimitsUserRuns(t *testing.T) {
	t.Parallel()
	const a = 1
	h := newHarness(t, noProactive())
	h.cfg.UserRunsPerMinute = 2
	h.cfg.RateNotice = "slow down"
	h.cfg.Tick = 5 * time.Millisecond
	reg := h.registry()
	h.build(func(d *loop.Deps) { d.Refusals = brain.NewRefusals(reg) })
	h.start()
	for id := uint64(1); id <= 2; id++ {
		h.submit(h.msg(id, a, "quick"))
		recv(t, h.think.entered, "an allowed run")
		recv(t, h.sender.attempts, "its reply")
		h.clock.Advance(time.Second)
	}
	h.submit(h.msg(3, a, "three"))
	if m := recv(t, h.sender.attempts, "the notice"); m.Text != "slow down" || m.Kind != brain.KindSystem {
		t.Fatalf("sent %+v, want the notice", m)
	}
	h.submit(h.msg(4, a, "four"))
	h.submit(h.msg(5, a, "five"))
	h.clock.Advance(30 * time.Second)
	h.submit(h.msg(6, a, "six")) // still limited: no second notice
	select {
	case w := <-h.think.entered:
		t.Fatalf("a run started inside the limit: %v", signalIDs(w))
	case m := <-h.sender.attempts:
		t.Fatalf("sent %q inside the limit", m.Text)
	case <-time.After(100 * time.Millisecond):
	}
	h.clock.Advance(30 * time.Second) // the first run's minute is over
	w := recv(t, h.think.entered, "the folded run")
	if !slices.Equal(signalIDs(w), []uint64{3, 4, 5, 6}) {
		t.Errorf("folded run has %v, want [3 4 5 6]", signalIDs(w))
	}
	recv(t, h.sender.attempts, "its reply")
	h.stop()
	if n := len(h.think.Wakes()); n != 3 {
		t.Errorf("%d runs, want 3", n)
	}
	if got := counted(t, reg, "anima_limits_refused_total", "limit", brain.LimitUserRuns); got != 1 {
		t.Errorf("user_runs refusals = %v, want 1 (one throttling)", got)
	}
}

// TestLoopRateLimitsCommands: commands count against the per-user limit as messages do:
// one user sending /forget yes over and over gets two answers a minute and the notice,
// and the throttled commands are answered, in order, when the minute is over. Another user
// is not throttled.
func TestLoopRateLimitsCommands(t *testing.T) {
	t.Parallel()
	const a, b = 1, 2
	h := newHarness(t, noProactive())
	h.cfg.UserRunsPerMinute = 2
	h.cfg.RateNotice = "slow down"
	h.cfg.Tick = 5 * time.Millisecond
	h.start()
	cmd := func(id uint64, user int64) brain.Signal {
		return h.command(id, user, "/forget yes")
	}
	for id := uint64(1); id <= 2; id++ {
		h.submit(cmd(id, a))
		if m := recv(t, h.sender.attempts, "an allowed command's reply"); m.Text != "ok /forget yes" {
			t.Fatalf("sent %q, want the command's reply", m.Text)
		}
	}
	h.submit(cmd(3, a))
	if m := recv(t, h.sender.attempts, "the notice"); m.Text != "slow down" || m.Chat != a {
		t.Fatalf("sent %+v, want the notice", m)
	}
	h.submit(cmd(4, a))
	h.submit(cmd(5, b))
	if m := recv(t, h.sender.attempts, "the other user's reply"); m.Chat != b {
		t.Fatalf("sent %+v to chat %d, want the other user's reply", m, m.Chat)
	}
	select {
	case m := <-h.sender.attempts:
		t.Fatalf("sent %q to chat %d inside the limit", m.Text, m.Chat)
	case <-time.After(100 * time.Millisecond):
	}
	h.clock.Advance(time.Minute)
	for range 2 {
		if m := recv(t, h.sender.attempts, "a throttled command's reply"); m.Text != "ok /forget yes" || m.Chat != a {
			t.Fatalf("sent %+v, want a throttled command's reply", m)
		}
	}
	h.stop()
	var seen []uint64
	for _, s := range h.cmds.sigs {
		if s.User == a {
			seen = append(seen, s.ID)
		}
	}
	if !slices.Equal(seen, []uint64{1, 2, 3, 4}) {
		t.Errorf("user a's commands answered in order %v, want [1 2 3 4]", seen)
	}
}
