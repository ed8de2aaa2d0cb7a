package bot

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
)

// fakePlugins answers /status with plain and detailed lines naming whom it was asked
// about, and records it.
type fakePlugins struct{ asked []int64 }

func (f *fakePlugins) Status(_, user int64, _ time.Time, _ *time.Location) string {
	f.asked = append(f.asked, user)
	return "I'm following: your driving test on Friday."
}

func (f *fakePlugins) StatusDetails(_, user int64, _ time.Time, _ *time.Location) string {
	f.asked = append(f.asked, user)
	return "Next check-in: the driving test, Sat 7 Mar 18:00 (if the moment is right)."
}

func (f *fakePlugins) Command(int64, int64, string, string, time.Time, *time.Location) (string, bool) {
	return "", false
}

// loadBerlin is Europe/Berlin, the zone the /status tests speak in.
func loadBerlin(t *testing.T) *time.Location {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return berlin
}

// evenings is the learned rhythm of someone who writes every evening, in loc.
func evenings(loc *time.Location) brain.Rhythm {
	var r brain.Rhythm
	for d := range 21 {
		for _, h := range []int{19, 20, 21} {
			r.Observe(time.Date(2026, 2, 8+d, h, 10, 0, 0, loc), loc)
		}
	}
	return r
}

// TestStatusSpeaksPlainly (issue 17 item 5): /status says in words relative to the user's
// zone when we last talked and when anima would probably write first, and what it follows
// of theirs, without machinery (no percentages, no gate names); /status details keeps the
// numbers; in a group only the sender's items are asked for.
func TestStatusSpeaksPlainly(t *testing.T) {
	t.Parallel()
	berlin := loadBerlin(t)
	now := time.Date(2026, 3, 2, 15, 0, 0, 0, berlin) // a Monday afternoon
	on := brain.DefaultProactivePolicy()
	yesterday := time.Date(2026, 3, 1, 21, 14, 0, 0, berlin)
	held := []brain.Ack{{Key: aggregation.ProactiveKey(1), Kind: brain.AckDeferred, Until: time.Date(2026, 3, 2, 20, 0, 0, 0, berlin), Firm: true, At: now}}
	machinery := []string{"%", "miss talking", "pressure", "Conversation:", "Mon 2 Mar", "earliest"}
	tests := []struct {
		name  string
		rel   brain.Relationship
		acks  []brain.Ack
		next  fakeForecaster
		arg   string
		want  []string
		avoid []string
	}{
		{"tomorrow evening", brain.Relationship{Chat: 1, User: 1, LastUserMsg: yesterday, SocialPressure: 0.08},
			nil, fakeForecaster{at: time.Date(2026, 3, 3, 18, 30, 0, 0, berlin), ok: true}, "",
			[]string{"We last talked yesterday evening: about half a waking day, with the night in between.",
				"I don't know yet when you usually write.", "If we don't talk before, I'd probably write tomorrow evening.",
				"I never write first between 22:30 and 08:30 your time.", "I'm following: your driving test on Friday.",
				statusDetailsHint}, machinery},
		{"on Friday morning", brain.Relationship{Chat: 1, User: 1, LastUserMsg: yesterday, UnansweredProactive: 2},
			nil, fakeForecaster{at: time.Date(2026, 3, 6, 9, 0, 0, 0, berlin), ok: true}, "",
			[]string{"so I'm giving you more room: if we don't talk before, I'd probably write on Friday morning."}, machinery},
		{"held back", brain.Relationship{Chat: 1, User: 1, LastUserMsg: now.Add(-20 * time.Minute), Status: brain.StatusAwaitingAnswer},
			held, fakeForecaster{at: time.Date(2026, 3, 3, 9, 0, 0, 0, berlin), ok: true}, "",
			[]string{"We last talked 20 minutes ago.", "I asked you something and I'm waiting for your answer.",
				"You asked me to hold back until this evening (20:00), so I won't write first before then.",
				"I'd probably write tomorrow morning."}, machinery},
		{"never", brain.Relationship{Chat: 1, User: 1}, nil, fakeForecaster{}, "",
			[]string{"I have no reason to write first for now."}, append(machinery, "We last talked")},
		{"group", brain.Relationship{Chat: -5, User: 2, Group: true}, nil, fakeForecaster{ok: true}, "",
			[]string{"I don't write first in this chat"}, append(machinery, "probably write", "usually write")},
		{"evening person", brain.Relationship{Chat: 1, User: 1, LastUserMsg: yesterday, Rhythm: evenings(berlin)},
			nil, fakeForecaster{at: time.Date(2026, 3, 2, 19, 0, 0, 0, berlin), ok: true}, "",
			[]string{"You usually write in the evening."}, append(machinery, "don't know yet")},
		{"details", brain.Relationship{Chat: 1, User: 1, LastUserMsg: yesterday, SocialPressure: 0.08},
			nil, fakeForecaster{at: time.Date(2026, 3, 3, 18, 30, 0, 0, berlin), ok: true}, "Details",
			[]string{"How much I miss talking to you: 8%.", "The earliest I might write first: Tue 3 Mar 18:30.",
				"Next check-in: the driving test, Sat 7 Mar 18:00"}, []string{"I'm following", statusDetailsHint}},
		{"unknown argument", brain.Relationship{Chat: 1, User: 1}, nil, fakeForecaster{}, "everything",
			[]string{"Send /status, or /status details"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, plugs := tc.next, &fakePlugins{}
			c := &commands{policy: on, next: &next, plugins: plugs}
			text := "/status"
			if tc.arg != "" {
				text += " " + tc.arg
			}
			sig := brain.Signal{Type: brain.SignalCommand, Chat: tc.rel.Chat, User: tc.rel.User, Text: text}
			res, err := c.Command(context.Background(), sig, loop.CommandView{Rel: tc.rel, Acks: tc.acks, Now: now, Loc: berlin})
			if err != nil || len(res.Reply) != 1 {
				t.Fatalf("/status → %+v, %v", res, err)
			}
			braintest.CheckText(t, "/status", res.Reply[0].Text, tc.want, tc.avoid)
			for _, u := range plugs.asked {
				if u != tc.rel.User {
					t.Errorf("the plugins were asked about user %d, want only the sender %d", u, tc.rel.User)
				}
			}
		})
	}
}

// fakeForecaster answers NextProactive with a fixed time and records what it was asked.
type fakeForecaster struct {
	at    time.Time
	ok    bool
	calls int
	rel   brain.Relationship
	loc   *time.Location
	acks  []brain.Ack
}

func (f *fakeForecaster) NextProactive(now time.Time, rel *brain.Relationship, loc *time.Location, acks []brain.Ack) (time.Time, bool) {
	f.calls++
	f.rel, f.loc, f.acks = *rel, loc, acks
	return f.at, f.ok
}

// TestStatusFormatsNextProactive: /status shows the aggregator's answer and nothing of its
// own making: the earliest time when there is one, nothing when it is never, and plain
// words (without asking) where anima never writes first.
func TestStatusFormatsNextProactive(t *testing.T) {
	t.Parallel()
	berlin := loadBerlin(t)
	now := time.Date(2026, 3, 2, 23, 0, 0, 0, berlin)
	on := brain.DefaultProactivePolicy()
	off := on
	off.Enabled = false
	noQuiet := on
	noQuiet.QuietHours = brain.QuietHours{}
	acks := []brain.Ack{{Key: aggregation.ProactiveKey(1), Kind: brain.AckDeferred, Until: now.Add(time.Hour), Firm: true, At: now}}
	tests := []struct {
		name    string
		policy  brain.ProactivePolicy
		rel     brain.Relationship
		fake    fakeForecaster
		want    []string
		notWant []string
		asked   bool
	}{
		{"a time", on, brain.Relationship{Chat: 1, LastUserMsg: now.Add(-time.Hour)},
			fakeForecaster{at: time.Date(2026, 3, 3, 8, 30, 0, 0, berlin), ok: true},
			[]string{"The earliest I might write first: Tue 3 Mar 08:30.", "Quiet hours: 22:30–08:30 your time.", "hold back until Tue 00:00"}, nil, true},
		{"never", on, brain.Relationship{Chat: 1, LastUserMsg: now.Add(-time.Hour)}, fakeForecaster{},
			nil, []string{"earliest", "don't write first"}, true},
		{"disabled", off, brain.Relationship{Chat: 1}, fakeForecaster{ok: true},
			[]string{"I don't write first in this chat."}, []string{"earliest"}, false},
		{"group", on, brain.Relationship{Chat: 1, Group: true}, fakeForecaster{ok: true},
			[]string{"I don't write first in this chat."}, []string{"earliest"}, false},
		{"dormant", on, brain.Relationship{Chat: 1, Dormant: true}, fakeForecaster{ok: true},
			[]string{"I won't write first until you write to me."}, []string{"earliest"}, false},
		{"no quiet hours", noQuiet, brain.Relationship{Chat: 1}, fakeForecaster{},
			nil, []string{"Quiet hours"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := tc.fake
			c := &commands{policy: tc.policy, next: &fake}
			got := c.status(loop.CommandView{Rel: tc.rel, Acks: acks, Now: now, Loc: berlin})
			braintest.CheckText(t, "status", got, tc.want, tc.notWant)
			if asked := fake.calls > 0; asked != tc.asked {
				t.Fatalf("forecaster asked: %v, want %v", asked, tc.asked)
			}
			if tc.asked && (!reflect.DeepEqual(fake.rel, tc.rel) || fake.loc != berlin || len(fake.acks) != 1) {
				t.Errorf("forecaster asked about %+v in %v with %d acks; want the view's", fake.rel, fake.loc, len(fake.acks))
			}
		})
	}
}

// TestStatusUsesTheAggregator: wired to the real aggregation layer, /status shows
// exactly the aggregator's NextProactive.
func TestStatusUsesTheAggregator(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	pol := brain.DefaultProactivePolicy()
	agg := aggregation.New(pol, aggregation.Options{})
	c := &commands{policy: pol, next: agg}
	rel := brain.Relationship{Chat: 1, LastUserMsg: now, UnansweredProactive: 2}
	next, ok := agg.NextProactive(now, &rel, time.UTC, nil)
	if !ok {
		t.Fatal("NextProactive: never")
	}
	want := "The earliest I might write first: " + next.Format("Mon 2 Jan 15:04") + "."
	if got := c.status(loop.CommandView{Rel: rel, Now: now, Loc: time.UTC}); !strings.Contains(got, want) {
		t.Errorf("status lacks %q:\n%s", want, got)
	}
}

// fakeOutage reports a fixed outage.
type fakeOutage struct {
	since time.Time
	down  bool
}

func (f fakeOutage) Outage() (time.Time, bool) { return f.since, f.down }

// TestStatusSaysSinceWhenTheModelIsUnreachable: /status names the outage's start in the
// user's zone while the model is unreachable, and says nothing of it otherwise.
func TestStatusSaysSinceWhenTheModelIsUnreachable(t *testing.T) {
	t.Parallel()
	berlin := loadBerlin(t)
	now := time.Date(2026, 3, 2, 15, 0, 0, 0, berlin)
	for _, tc := range []struct {
		name   string
		outage fakeOutage
		want   bool
	}{
		{"down", fakeOutage{since: now.Add(-12 * time.Minute), down: true}, true},
		{"up", fakeOutage{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &commands{policy: brain.DefaultProactivePolicy(), next: &fakeForecaster{}, outage: tc.outage}
			got := c.status(loop.CommandView{Now: now, Loc: berlin, Rel: brain.Relationship{Chat: 1, User: 1}})
			line := "I can't reach my thoughts (the language model) since Mon 14:48 (12m ago)"
			if has := strings.Contains(got, line); has != tc.want {
				t.Errorf("status contains %q: %v, want %v:\n%s", line, has, tc.want, got)
			}
		})
	}
}
