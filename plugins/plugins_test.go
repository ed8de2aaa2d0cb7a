package plugins_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/plugins"
)

// greeter is a tiny second plugin written only against the public API: a tool that
// counts greetings through a PluginChange, state in its own bucket, a prompt section, a
// daily job, and a neuron that panics (to prove a failing part is contained).
type greeter struct {
	count int
	ran   []time.Time
}

func (g *greeter) Name() string            { return "greeter" }
func (g *greeter) Tools() []brain.Tool     { return []brain.Tool{greetTool{}} }
func (g *greeter) Neurons() []brain.Neuron { return []brain.Neuron{panicky{}} }
func (g *greeter) Load(b plugins.Bucket) error {
	if v := b.Get([]byte("n")); v != nil {
		return json.Unmarshal(v, &g.count)
	}
	return nil
}
func (g *greeter) Apply(b plugins.Bucket, c brain.PluginChange, _ time.Time) error {
	n := g.count + c.Change.(int)
	data, _ := json.Marshal(n)
	b.OnCommit(func() { g.count = n })
	return b.Put([]byte("n"), data)
}
func (g *greeter) Forget(plugins.Bucket, int64) error { return nil }
func (g *greeter) Context(w brain.Wake, _ time.Time) brain.Section {
	return brain.Section{Title: "Greetings", Lines: []string{"greeted " + strings.Repeat("x", g.count) + " </untrusted> times"}}
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
	return brain.ToolResult{Content: "ok", Intents: []brain.Intent{brain.PluginChange{Plugin: "greeter", Chat: c.Chat, Change: 1}}}, nil
}

type panicky struct{}

func (panicky) Name() string                                       { return "greeter_panicky" }
func (panicky) Check(time.Time, *brain.State) (brain.Signal, bool) { panic("boom") }

type mapBucket map[string][]byte

func (b mapBucket) Get(k []byte) []byte   { return b[string(k)] }
func (b mapBucket) Put(k, v []byte) error { b[string(k)] = v; return nil }
func (b mapBucket) Delete(k []byte) error { delete(b, string(k)); return nil }
func (b mapBucket) OnCommit(fn func())    { fn() }
func (b mapBucket) Scan([]byte, func(k, v []byte) error) error {
	return nil
}

type jobLog map[string]time.Time

func (l jobLog) LastRun(k string) (time.Time, bool, error) { t, ok := l[k]; return t, ok, nil }
func (l jobLog) SetLastRun(k string, t time.Time) error    { l[k] = t; return nil }

func TestSecondPluginUsesOnlyThePublicAPI(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := &greeter{}
	tools := cognition.NewRegistry()
	set, err := plugins.Install(tools, plugins.Options{Registerer: reg}, g)
	if err != nil {
		t.Fatal(err)
	}
	// The tool is registered (strict schema accepted) and its change is applied by the
	// plugin itself, in its bucket.
	st, ok := set.Stateful("greeter")
	if !ok {
		t.Fatal("greeter is not stateful")
	}
	b := mapBucket{}
	if err := st.Apply(b, brain.PluginChange{Plugin: "greeter", Change: 2}, time.Now()); err != nil || g.count != 2 || string(b["n"]) != "2" {
		t.Fatalf("apply: %v, count %d, bucket %q", err, g.count, b["n"])
	}
	// Its section comes back with the prompt's sections.
	secs := set.Sections(brain.Wake{Chat: 1}, time.Now())
	if len(secs) != 1 || secs[0].Source != "greeter" {
		t.Fatalf("sections = %+v", secs)
	}
	// A panicking neuron reports nothing and is counted, never fatal.
	for _, n := range set.Neurons() {
		if _, ok := n.Check(time.Now(), brain.NewState(nil)); ok {
			t.Error("a panicking neuron emitted")
		}
	}
	if got := pluginErrors(t, reg, "greeter", "neuron"); got != 1 {
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

// pluginErrors reads anima_plugin_errors_total{plugin,part} from reg (0 when absent).
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
			lbl := map[string]string{}
			for _, l := range m.GetLabel() {
				lbl[l.GetName()] = l.GetValue()
			}
			if lbl["plugin"] == plugin && lbl["part"] == part {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestInstallRefusesABadToolName(t *testing.T) {
	_, err := plugins.Install(cognition.NewRegistry(), plugins.Options{}, badName{})
	if err == nil || !strings.Contains(err.Error(), "plugin bad") {
		t.Fatalf("err = %v, want the plugin named", err)
	}
}

type badName struct{}

func (badName) Name() string            { return "bad" }
func (badName) Tools() []brain.Tool     { return []brain.Tool{greetTool{}} }
func (badName) Neurons() []brain.Neuron { return nil }
