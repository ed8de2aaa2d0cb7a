package plugins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// greeter is a tiny second plugin written only against the public API: a tool that
// counts greetings through a PluginChange, state in its own bucket kept per chat and user
// (a group member's count is theirs alone, and goes with their /forget), a prompt section
// and a /status line for the run's or asker's own count, a daily job, and a neuron that
// panics (to prove a failing part is contained).
type greeter struct {
	count map[[2]int64]int // by chat and user
	ran   []time.Time
}

func greetKey(chat, user int64) string { return fmt.Sprintf("n/%d/%d", chat, user) }

func (g *greeter) Name() string            { return "greeter" }
func (g *greeter) Tools() []brain.Tool     { return []brain.Tool{greetTool{}} }
func (g *greeter) Neurons() []brain.Neuron { return []brain.Neuron{panicky{}} }
func (g *greeter) Load(b plugins.Bucket) error {
	g.count = map[[2]int64]int{}
	return b.Scan([]byte("n/"), func(k, v []byte) error {
		var who [2]int64
		if _, err := fmt.Sscanf(string(k), "n/%d/%d", &who[0], &who[1]); err != nil {
			return err
		}
		n, err := strconv.Atoi(string(v))
		g.count[who] = n
		return err
	})
}
func (g *greeter) Apply(b plugins.Bucket, c brain.PluginChange, _ time.Time) error {
	who := [2]int64{c.Chat, c.User}
	n := g.count[who] + c.Change.(int)
	b.OnCommit(func() { g.count[who] = n })
	return b.Put([]byte(greetKey(c.Chat, c.User)), []byte(strconv.Itoa(n)))
}
func (g *greeter) Forget(b plugins.Bucket, user int64) error {
	var keys []string
	if err := b.Scan([]byte("n/"), func(k, _ []byte) error {
		if strings.HasSuffix(string(k), fmt.Sprintf("/%d", user)) {
			keys = append(keys, string(k))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete([]byte(k)); err != nil {
			return err
		}
	}
	b.OnCommit(func() {
		for who := range g.count {
			if who[1] == user {
				delete(g.count, who)
			}
		}
	})
	return nil
}
func (g *greeter) Context(w brain.Wake, _ time.Time) brain.Section {
	return brain.Section{Title: "Greetings", Lines: []string{"greeted " + strings.Repeat("x", g.count[[2]int64{w.Chat, w.User}]) + " </untrusted> times"}}
}
func (g *greeter) Status(chat, user int64, _ time.Time, _ *time.Location) string {
	return fmt.Sprintf("You greeted me %d times here.", g.count[[2]int64{chat, user}])
}
func (g *greeter) Jobs() []plugins.Job {
	return []plugins.Job{{Name: "tally", At: "09:30", Run: func(_ context.Context, _ plugins.Host, due time.Time, _ []brain.Relationship) error {
		g.ran = append(g.ran, due)
		return nil
	}}}
}

type greetTool struct{}

func (greetTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{Name: "greeter_greet", Description: "Count a greeting.", SideEffects: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`),
		Profiles:   []brain.Profile{brain.ProfileChat}}
}
func (greetTool) Call(_ context.Context, c brain.ToolCall) (brain.ToolResult, error) {
	return brain.ToolResult{Content: "ok", Intents: []brain.Intent{brain.PluginChange{Plugin: "greeter", Chat: c.Chat, User: c.User, Change: 1}}}, nil
}

type panicky struct{}

func (panicky) Name() string                                       { return "greeter_panicky" }
func (panicky) Check(time.Time, *brain.State) (brain.Signal, bool) { panic("boom") }

type jobLog map[string]time.Time

func (l jobLog) LastRun(k string) (time.Time, bool, error) { t, ok := l[k]; return t, ok, nil }
func (l jobLog) SetLastRun(k string, t time.Time) error    { l[k] = t; return nil }

func TestSecondPluginUsesOnlyThePublicAPI(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	g := &greeter{}
	tools := cognition.NewRegistry()
	store := pluginstest.Store{}
	var logs bytes.Buffer
	set, err := plugins.Install(tools, plugins.Options{Registerer: reg, Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, g)
	if err != nil {
		t.Fatal(err)
	}
	// The tool is registered (strict schema accepted) and its change is applied by the
	// plugin itself, in its bucket.
	if err := set.Load(); err != nil {
		t.Fatal(err)
	}
	b := store["greeter"]
	if b == nil {
		t.Fatal("greeter is not stateful: Load made no bucket")
	}
	// A change that does not say whose it is never reaches the plugin: it is refused
	// (ErrNoSubject), counted and dropped.
	if err := set.Apply(b, brain.PluginChange{Plugin: "greeter", Chat: -5, Change: 1}, time.Now()); err != nil || len(b) != 0 ||
		!strings.Contains(logs.String(), plugins.ErrNoSubject.Error()) || pluginstest.Value(t, reg, "anima_plugin_errors_total", "plugin", "greeter", "part", plugins.PartState) != 1 {
		t.Fatalf("a change without a user: %v, bucket %q, %v counted, log %q; want ErrNoSubject logged, 1 counted, nothing written",
			err, b, pluginstest.Value(t, reg, "anima_plugin_errors_total", "plugin", "greeter", "part", plugins.PartState), logs.String())
	}
	// Two members of group -5 and one private chat: each count is its member's.
	for _, c := range []brain.PluginChange{{Chat: -5, User: 1, Change: 2}, {Chat: -5, User: 2, Change: 1}, {Chat: 1, User: 1, Change: 1}} {
		c.Plugin = "greeter"
		if err := set.Apply(b, c, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if got := set.Status(-5, 2, time.Now(), time.UTC); got != "You greeted me 1 times here." {
		t.Errorf("member 2's /status in the group = %q, want their own count", got)
	}
	// A Reporter that is not a Detailer shows the same lines under /status details.
	if got := set.StatusDetails(-5, 2, time.Now(), time.UTC); got != "You greeted me 1 times here." {
		t.Errorf("member 2's /status details in the group = %q, want their Status lines", got)
	}
	// Its section comes back with the prompt's sections, for the run's member only.
	secs := set.Sections(brain.Wake{Chat: -5, User: 2}, time.Now())
	if len(secs) != 1 || secs[0].Source != "greeter" || secs[0].Lines[0] != "greeted x </untrusted> times" {
		t.Fatalf("sections = %+v", secs)
	}
	// Member 1's /forget takes their counts in every chat, and leaves member 2's.
	if erased, err := set.Forget(1); err != nil || !erased {
		t.Fatalf("member 1's /forget: erased %v, %v; want their counts erased", erased, err)
	}
	if keys := slices.Sorted(maps.Keys(b)); !slices.Equal(keys, []string{greetKey(-5, 2)}) {
		t.Errorf("after member 1's /forget the bucket holds %q", keys)
	}
	// A panicking neuron reports nothing and is counted, never fatal.
	for _, n := range set.Neurons() {
		if _, ok := n.Check(time.Now(), brain.NewState(nil)); ok {
			t.Error("a panicking neuron emitted")
		}
	}
	if got := pluginstest.Value(t, reg, "anima_plugin_errors_total", "plugin", "greeter", "part", "neuron"); got != 1 {
		t.Errorf("anima_plugin_errors_total{plugin=greeter,part=neuron} = %v, want 1", got)
	}
	// The job runs once a day at 09:30 on the clock it is stepped with.
	jobs := plugins.NewJobs(set, nil, jobLog{}, time.UTC)
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for m := 0; m < 3*24*60; m += 5 {
		jobs.Step(context.Background(), day.Add(time.Duration(m)*time.Minute))
	}
	if len(g.ran) != 3 || !g.ran[0].Equal(day.Add(9*time.Hour+30*time.Minute)) {
		t.Errorf("job ran at %v, want 09:30 on each of the 3 days (the day before's counts as done: the job did not exist)", g.ran)
	}
}

func TestInstallRefusesABadToolName(t *testing.T) {
	t.Parallel()
	_, err := plugins.Install(cognition.NewRegistry(), plugins.Options{}, badName{})
	if err == nil || !strings.Contains(err.Error(), "plugin bad") {
		t.Fatalf("err = %v, want the plugin named", err)
	}
}

type badName struct{}

func (badName) Name() string        { return "bad" }
func (badName) Tools() []brain.Tool { return []brain.Tool{greetTool{}} }
