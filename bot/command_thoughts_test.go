package bot

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
)

// TestThoughtsShowsSelfNote: /thoughts shows, after the inner life's journal, anima's own
// note about the two of them and the live thoughts it kept to share (not an expired one);
// without either it is the plugin's answer alone.
func TestThoughtsShowsSelfNote(t *testing.T) {
	t.Parallel()
	e := newJournalEnv(t)
	p := innerlife.New(innerlife.Config{}, innerlife.Options{Registerer: prometheus.NewRegistry(), Clock: braintest.NewClock(e.at)})
	set, err := plugins.Install(cognitionRegistry{}, plugins.Options{Store: pluginStore{e.store}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Load(); err != nil {
		t.Fatal(err)
	}
	c := &commands{plugins: set}
	now := e.at
	rel := brain.Relationship{Chat: 7, User: 7, Self: &brain.Self{Note: "You call me the owl.", Shares: []brain.Share{
		{ID: "x", Text: "an expired thought", Expires: now.Add(-time.Hour)},
		{ID: "a", Text: "herons are patient", Expires: time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)},
	}}}
	for _, tc := range []struct {
		name       string
		rel        brain.Relationship
		want, dont []string
	}{
		{"note and share", rel, []string{"I haven't written anything in my journal about us yet.",
			"My own note about us:\nYou call me the owl.", "Things I might bring up:\n• herons are patient (until Wed 4 Mar)"},
			[]string{"an expired thought"}},
		{"none", brain.Relationship{Chat: 7, User: 7}, []string{"I haven't written anything"}, []string{"My own note", "bring up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Command(context.Background(), brain.Signal{Type: brain.SignalCommand, Chat: 7, User: 7, Text: "/thoughts"},
				loop.CommandView{Rel: tc.rel, Now: now, Loc: time.UTC})
			if err != nil || len(res.Reply) != 1 {
				t.Fatalf("Command = %+v, %v", res, err)
			}
			checkText(t, "/thoughts", res.Reply[0].Text, tc.want, tc.dont)
		})
	}
}
