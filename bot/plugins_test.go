package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/storage"
)

// flaky is a stateful plugin whose Apply writes a key, then fails while fail is set.
type flaky struct {
	fail    bool
	applied int // changes committed
}

func (f *flaky) Name() string                       { return "flaky" }
func (f *flaky) Load(plugins.Bucket) error          { return nil }
func (f *flaky) Forget(plugins.Bucket, int64) error { return nil }
func (f *flaky) Apply(b plugins.Bucket, c brain.PluginChange, _ time.Time) error {
	if err := b.Put([]byte(c.Change.(string)), []byte("x")); err != nil {
		return err
	}
	if f.fail {
		return errors.New("disk on fire")
	}
	b.OnCommit(func() { f.applied++ })
	return nil
}

// TestPluginApplyFailureRollsBackTheTurn: a plugin's Apply that fails inside a real bbolt
// turn leaves nothing of the turn — its own write, the facts and cancelled schedule before
// it, the history, the outbox — and the signal stays in the inbox, so the turn runs again
// and then commits whole. The failure is counted.
func TestPluginApplyFailureRollsBackTheTurn(t *testing.T) {
	t.Parallel()
	e := newJournalEnv(t)
	reg := prometheus.NewRegistry()
	f := &flaky{fail: true}
	set, err := plugins.Install(cognitionRegistry{}, plugins.Options{Registerer: reg, Store: pluginStore{e.store}}, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Load(); err != nil {
		t.Fatal(err)
	}
	e.j.plugs = set
	rec := e.turn(
		brain.Remember{Attribute: "pet", Value: "a cat called Mo"},
		brain.CancelSchedule{Chat: 5, ID: "abcdef"},
		brain.PluginChange{Plugin: "flaky", Chat: 5, User: 7, Change: "k1"},
	)
	if _, err := e.j.Commit(context.Background(), rec); err == nil {
		t.Fatal("Commit succeeded though the plugin's Apply failed")
	}
	keys := func() []string {
		var ks []string
		if err := e.store.View(func(tx *storage.Tx) error {
			return tx.Scan(pluginBucketName("flaky"), nil, func(k, _ []byte) error { ks = append(ks, string(k)); return nil })
		}); err != nil {
			t.Fatal(err)
		}
		return ks
	}
	if ks := keys(); len(ks) != 0 {
		t.Errorf("the plugin's bucket holds %q after a failed turn", ks)
	}
	if got := e.facts(t, 7); len(got) != 0 {
		t.Errorf("facts %q remembered by a failed turn", got)
	}
	if got, want := e.scheduled(t), []string{"abcdef"}; !slices.Equal(got, want) {
		t.Errorf("schedules %q, want %q: a failed turn cancelled it", got, want)
	}
	if h, err := e.store.History(5, 0); err != nil || len(h) != 0 {
		t.Errorf("history %+v (%v), want nothing", h, err)
	}
	if out, err := e.store.PendingOutbox(); err != nil || len(out) != 0 {
		t.Errorf("outbox %+v (%v), want nothing", out, err)
	}
	if pending, err := e.store.Pending(); err != nil || len(pending) != 1 {
		t.Errorf("inbox %+v (%v), want the signal kept for the next try", pending, err)
	}
	if f.applied != 0 {
		t.Errorf("OnCommit ran %d times for a rolled-back turn", f.applied)
	}
	if n := pluginErrors(t, reg, "flaky", plugins.PartState); n != 1 {
		t.Errorf("anima_plugin_errors_total{plugin=flaky,part=state} = %v, want 1", n)
	}

	// The turn runs again and commits whole.
	f.fail = false
	if _, err := e.j.Commit(context.Background(), rec); err != nil {
		t.Fatalf("the turn's second run: %v", err)
	}
	if ks := keys(); !slices.Equal(ks, []string{"k1"}) || f.applied != 1 {
		t.Errorf("after the second run: bucket %q, applied %d; want k1 once", ks, f.applied)
	}
	if got, want := e.facts(t, 7), []string{"pet=a cat called Mo"}; !slices.Equal(got, want) {
		t.Errorf("facts %q, want %q", got, want)
	}
	if pending, err := e.store.Pending(); err != nil || len(pending) != 0 {
		t.Errorf("inbox %+v (%v), want the signal consumed", pending, err)
	}
}

type cognitionRegistry struct{}

func (cognitionRegistry) Register(brain.Tool) error { return nil }

// pluginErrors reads anima_plugin_errors_total{plugin,part} from reg.
func pluginErrors(t *testing.T, reg *prometheus.Registry, plugin, part string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "anima_plugin_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["plugin"] == plugin && labels["part"] == part {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestMemorySearchFindsDormantConcerns: core_memory_search finds, through the plugins'
// searcher over the real store, a concern dormant for 100 days (which prompts no longer
// carry) and a journal entry older than the three that prompts carry.
func TestMemorySearchFindsDormantConcerns(t *testing.T) {
	t.Parallel()
	e := newJournalEnv(t)
	now := e.at
	clock := braintest.NewClock(now)
	p := innerlife.New(innerlife.Config{}, innerlife.Options{Registerer: prometheus.NewRegistry(), Clock: clock})
	set, err := plugins.Install(cognitionRegistry{}, plugins.Options{Store: pluginStore{e.store}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Load(); err != nil {
		t.Fatal(err)
	}
	e.j.plugs = set
	call := func(tool brain.Tool, at time.Time, args string) brain.ToolResult {
		t.Helper()
		res, err := tool.Call(context.Background(), brain.ToolCall{Chat: 5, User: 7, Args: []byte(args), Now: at})
		if err != nil {
			t.Fatalf("%s: %v", tool.Spec().Name, err)
		}
		if _, err := e.j.Commit(context.Background(), brain.TurnRecord{Chat: 5, User: 7, At: at, Intents: res.Intents}); err != nil {
			t.Fatal(err)
		}
		return res
	}
	concern, journal := p.Tools()[0], p.Tools()[1]
	old := now.Add(-100 * 24 * time.Hour)
	call(concern, old, `{"action":"open","id":null,"summary":"learning the cello","kind":"interest","check_in_at":null,"note":null}`)
	call(journal, old, `{"kind":"memory","text":"They played me a cello piece, a little shaky but proud."}`)
	for i := range 3 {
		at := now.Add(-time.Duration(3-i) * time.Hour)
		p.Context(brain.Wake{Chat: 5, User: 7}, at) // a new run each time
		call(journal, at, fmt.Sprintf(`{"kind":"observation","text":"Entry number %d about the weather."}`, i))
	}
	sec := p.Context(brain.Wake{Chat: 5, User: 7, Profile: brain.ProfileChat}, now)
	if prompt := strings.Join(sec.Lines, "\n"); strings.Contains(prompt, "cello") {
		t.Fatalf("the prompt carries the dormant concern or the old entry:\n%s", prompt)
	}
	var search brain.Tool
	for _, tool := range e.mem.Tools(pluginSearchers(set)...) {
		if tool.Spec().Name == memory.ToolSearch {
			search = tool
		}
	}
	res, err := search.Call(context.Background(), brain.ToolCall{Chat: 5, User: 7, Args: []byte(`{"query":"the cello"}`), Now: now, Zone: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(concern) you followed: learning the cello", "(journal) you wrote (memory): They played me a cello piece"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("core_memory_search lacks %q:\n%s", want, res.Content)
		}
	}
	// Another chat finds nothing of it.
	res, err = search.Call(context.Background(), brain.ToolCall{Chat: 6, User: 8, Args: []byte(`{"query":"cello"}`), Now: now})
	if err != nil || res.Content != "nothing found" {
		t.Errorf("chat 6 searched chat 5's concerns: %q, %v", res.Content, err)
	}
}

// keeper is a stateful plugin that keeps one key per user and forgets it.
type keeper struct{}

func (keeper) Name() string                                              { return "keeper" }
func (keeper) Load(plugins.Bucket) error                                 { return nil }
func (keeper) Apply(plugins.Bucket, brain.PluginChange, time.Time) error { return nil }
func (keeper) Forget(b plugins.Bucket, user int64) error {
	return b.Delete(fmt.Appendf(nil, "user:%d", user))
}

// TestPluginOnlyForgetOwesAnErasure: a user whose only data was a plugin's got no
// compaction after /forget (the plugin deleted through its own transaction, which marked
// nothing), so the words stayed in the file's free pages.
func TestPluginOnlyForgetOwesAnErasure(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	set, err := plugins.Install(cognitionRegistry{}, plugins.Options{Store: pluginStore{st}}, keeper{})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Load(); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(tx *storage.Tx) error {
		return tx.Put(pluginBucketName("keeper"), []byte("user:7"), []byte("a secret"))
	}); err != nil {
		t.Fatal(err)
	}
	f := pluginForgetter{forgetter: userForgetter{store: st}, set: set}
	for _, tc := range []struct {
		user      int64
		wantErase bool
	}{{8, false}, {7, true}} {
		rep, err := f.ForgetUser(tc.user)
		if err != nil {
			t.Fatal(err)
		}
		pending, err := st.ErasurePending()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Erased != tc.wantErase || pending != tc.wantErase {
			t.Errorf("user %d: Erased %v, pending %v; want %v", tc.user, rep.Erased, pending, tc.wantErase)
		}
	}
}

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
			braintest.CheckText(t, "/thoughts", res.Reply[0].Text, tc.want, tc.dont)
		})
	}
}
