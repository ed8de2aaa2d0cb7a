package bot

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/loop"
)

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
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
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
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("status lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("status has %q:\n%s", w, got)
				}
			}
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
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
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
