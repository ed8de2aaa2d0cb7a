package innerlife_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// apply applies the plugin's changes among ins to b, as a committed turn at at.
func apply(t *testing.T, p *innerlife.Plugin, b pluginstest.Bucket, at time.Time, ins ...brain.Intent) {
	t.Helper()
	for _, in := range ins {
		if c, ok := in.(brain.PluginChange); ok {
			if err := p.Apply(b, c, at); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func newPlugin(t *testing.T, start time.Time) (*innerlife.Plugin, pluginstest.Bucket) {
	p, b, _ := newPluginReg(t, start)
	return p, b
}

func newPluginReg(t *testing.T, start time.Time) (*innerlife.Plugin, pluginstest.Bucket, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	p := innerlife.New(innerlife.Config{}, innerlife.Options{Registerer: reg, Clock: braintest.NewClock(start)})
	return p, pluginstest.Bucket{}, reg
}

// metricValue is the value of the series of name with label=value in reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if m.GetCounter() != nil {
						return m.GetCounter().GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}

// checkinWake is the proactive wake of chat 7 for its due check-in.
func checkinWake(at time.Time) brain.Wake {
	return brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileProactive, Gated: true, At: at,
		Reason: brain.Reason{Code: brain.ReasonConcernCheckin}, Rel: brain.Relationship{Chat: 7, User: 7}}
}

// TestCheckinRaisedAgainAfterAFailedRun: a check-in whose proactive run failed (nothing
// committed) is raised again in the same process; while it waits in the state as a gated
// thought, or a run carrying it may still be going, nothing more is raised; once a run
// that showed it commits, it is never raised again.
func TestCheckinRaisedAgainAfterAFailedRun(t *testing.T) {
	t.Parallel()
	due := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b, reg := newPluginReg(t, due)
	apply(t, p, b, due.Add(-time.Hour), innerlife.OpenConcernChange(7, "c1", due))
	n := p.Neurons()[0]
	held := &brain.State{Thoughts: []brain.Thought{{Chat: 7, Gated: true, Ref: "c1", Reason: brain.ReasonConcernCheckin}}}
	empty := &brain.State{}

	check := func(at time.Time, st *brain.State) bool {
		t.Helper()
		sig, ok := n.Check(at, st)
		if ok && (sig.Ref != "c1" || sig.Detail != brain.ReasonConcernCheckin || sig.Chat != 7) {
			t.Fatalf("signal %+v", sig)
		}
		return ok
	}
	steps := []struct {
		at    time.Duration
		st    *brain.State
		raise bool
		why   string
	}{
		{-time.Second, empty, false, "not due yet"},
		{0, empty, true, "due"},
		{time.Second, empty, false, "just raised"},
		{innerlife.RecheckAfter, held, false, "a gate holds it: it waits as a gated thought"},
		{2 * innerlife.RecheckAfter, empty, true, "its run failed: raised again"},
	}
	for _, s := range steps {
		if got := check(due.Add(s.at), s.st); got != s.raise {
			t.Fatalf("at +%v (%s): raised %v, want %v", s.at, s.why, got, s.raise)
		}
	}
	// A run shows it, and fails; the recheck within RecheckAfter of the run leaves it.
	shownAt := due.Add(2*innerlife.RecheckAfter + time.Minute)
	if sec := p.Context(checkinWake(shownAt), shownAt); len(sec.Intents) != 1 {
		t.Fatalf("the check-in run carries %d intents, want the check-in", len(sec.Intents))
	}
	if check(due.Add(3*innerlife.RecheckAfter), empty) {
		t.Fatal("raised while the run that carried it may still be going")
	}
	if !check(due.Add(4*innerlife.RecheckAfter), empty) {
		t.Fatal("not raised again after the run that carried it failed")
	}
	// This time the run commits (silently: the model chose not to write). It counts as asked.
	at := due.Add(4*innerlife.RecheckAfter + time.Minute)
	apply(t, p, b, at, p.Context(checkinWake(at), at).Intents...)
	for i := 5; i < 10; i++ {
		if check(due.Add(time.Duration(i)*innerlife.RecheckAfter), empty) {
			t.Fatalf("a check-in asked (by a silent run) was raised again at +%v", time.Duration(i)*innerlife.RecheckAfter)
		}
	}
	for attempt, want := range map[string]float64{"first": 1, "again": 2} {
		if got := metricValue(t, reg, "anima_innerlife_checkins_raised_total", "attempt", attempt); got != want {
			t.Errorf("check-ins raised (%s) = %v, want %v", attempt, got, want)
		}
	}
	if got := metricValue(t, reg, "anima_innerlife_checkins_asked_total", "how", "proactive"); got != 1 {
		t.Errorf("check-ins asked (proactive) = %v, want 1", got)
	}
	later := due.Add(time.Hour * 3)
	if sec := p.Context(checkinWake(later), later); strings.Contains(strings.Join(sec.Lines, "\n"), "due check-in") || len(sec.Intents) != 0 {
		t.Errorf("an asked check-in is still shown as due: %q", sec.Lines)
	}
	if s := p.Status(7, 7, later, time.UTC); strings.Contains(s, "Next check-in") {
		t.Errorf("/status still lists an asked check-in:\n%s", s)
	}
}

func journalCall(t *testing.T, p *innerlife.Plugin, at time.Time, text string) (brain.ToolResult, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"kind": "observation", "text": text})
	return p.Tools()[1].Call(context.Background(), brain.ToolCall{Chat: 7, User: 7, Args: args, Now: at})
}

// TestJournalSlotTakenAtCommit: the 5-minute journal slot is taken when a turn commits; a
// second entry in the same run is refused; a run that failed leaves the slot free for the
// next run; two entries committed within 5 minutes (a dream's and a chat run's) keep one.
func TestJournalSlotTakenAtCommit(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b := newPlugin(t, at)
	run := func(at time.Time) { p.Context(brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileChat, At: at}, at) }

	run(at)
	if _, err := journalCall(t, p, at, "first, in a run that fails"); err != nil {
		t.Fatal(err)
	}
	if _, err := journalCall(t, p, at.Add(time.Second), "second in the same run"); err == nil || !strings.Contains(err.Error(), "5 minutes") {
		t.Fatalf("a second entry in one run: %v, want refused", err)
	}
	// The run failed: nothing committed. The turn runs again a minute later.
	retry := at.Add(time.Minute)
	run(retry)
	res, err := journalCall(t, p, retry, "written by the retried turn")
	if err != nil {
		t.Fatalf("the retried turn was refused its entry: %v", err)
	}
	apply(t, p, b, retry, res.Intents...)
	next := retry.Add(2 * time.Minute)
	run(next)
	if _, err := journalCall(t, p, next, "too soon"); err == nil {
		t.Fatal("an entry 2 minutes after a committed one was accepted")
	}
	later := retry.Add(innerlife.JournalEvery)
	run(later)
	res, err = journalCall(t, p, later, "five minutes later")
	if err != nil {
		t.Fatalf("an entry 5 minutes after the last was refused: %v", err)
	}
	// Meanwhile a dream's entry committed first: the chat run's entry is dropped at commit.
	dream := innerlife.EntryChange(7, "the dream's digest", later.Add(time.Second))
	apply(t, p, b, later, dream)
	apply(t, p, b, later, res.Intents...)
	out, _ := p.Command(7, 7, "/thoughts", "", later, time.UTC)
	if strings.Contains(out, "five minutes later") || !strings.Contains(out, "the dream's digest") || !strings.Contains(out, "written by the retried turn") {
		t.Errorf("/thoughts after two entries committed within 5 minutes:\n%s", out)
	}
}
