package bot

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// SimResult is what Simulate observed.
type SimResult struct {
	// PerDay counts proactive wakes (model calls) per simulated local day, check-ins
	// included.
	PerDay []int
	// Checkins counts the proactive wakes that were concern check-ins, per day (nil: not
	// simulated).
	Checkins []int
	// Dreams counts dream runs (model calls too) per day (nil: not simulated).
	Dreams []int
	// Wakes lists every wake (and dream) with its local time and reason.
	Wakes []string
}

// Simulate replays the configured brain under a simulated clock: one user writes once at
// 09:00 local time on the first day and then stays silent for the given days, while anima
// sends a message on every proactive wake. Nothing calls a model or Telegram; it shows
// what the proactive policy of cfg does, one simulated minute per step, with the inner
// life's check-ins (gated proactive wakes) and nightly dreams (each one model call).
func Simulate(cfg config.Config, days int) (SimResult, error) {
	if err := cfg.Validate(); err != nil {
		return SimResult{}, err
	}
	zone, err := cfg.User.Location()
	if err != nil {
		return SimResult{}, err
	}
	// The inner life as configured: its check-in neuron runs in the autonomic layer, and
	// its nightly dream on the simulated clock (a dream counts as one model call).
	clock := &simClock{}
	var plugTools toolList
	store := pluginstest.Store{}
	plugs, err := plugins.Install(&plugTools, plugins.Options{Store: store}, builtinPlugins(cfg.Plugins, clock, nil, nil)...)
	if err != nil {
		return SimResult{}, err
	}
	agg, auto := ProactiveLayers(cfg.Proactive.Policy(), nil, plugs.Neurons()...)
	st := brain.NewState(zone)
	// The simulation runs only the brain's per-tick part, a Stepper: the autonomic and
	// aggregation layers over the state, and the wake bookkeeping. It leaves out the rest
	// of the CoreLoop: no inbox or channel (signals are passed in), no cognition (a wake
	// is counted and answered below as if a message went out), no commands, no delivery or
	// retries, no persistence (nothing is stored), no clock (each step is given its time).
	stepper := loop.NewStepper(loop.StepperDeps{State: st, Autonomic: auto, Aggregator: agg})

	start := time.Date(2026, 3, 2, 9, 0, 0, 0, zone) // a Monday
	const chat = 1
	stepper.Step(start, []brain.Signal{{Type: brain.SignalUserMessage, Source: "sim", Chat: chat, User: chat, Text: "hi", At: start}})
	st.Rel(chat).MarkSent(start.Add(time.Second), brain.KindReply)
	res := SimResult{PerDay: make([]int, days), Checkins: make([]int, days), Dreams: make([]int, days)}
	midnight := time.Date(2026, 3, 2, 0, 0, 0, 0, zone)
	dayOf := func(now time.Time) int { return int(now.Sub(midnight).Hours() / 24) }
	host := &simHost{set: plugs, store: store, st: st, onDream: func(w brain.Wake) {
		if d := dayOf(clock.now); d < days {
			res.Dreams[d]++
		}
		res.Wakes = append(res.Wakes, fmt.Sprintf("%s  %s: %s", clock.now.In(zone).Format("Mon 02 Jan 15:04"), w.Reason.Code, w.Reason.Text))
	}}
	if err := plugs.Load(); err != nil {
		return SimResult{}, err
	}
	jobs := plugins.NewJobs(plugs, host, simJobLog{}, zone)
	end := start.AddDate(0, 0, days)
	for now := start.Add(time.Minute); now.Before(end); now = now.Add(time.Minute) {
		clock.now = now
		for _, w := range stepper.Step(now, nil) {
			if day := dayOf(now); day < days {
				res.PerDay[day]++
				if w.Reason.Code == brain.ReasonConcernCheckin {
					res.Checkins[day]++
				}
			}
			res.Wakes = append(res.Wakes, fmt.Sprintf("%s  %s: %s", now.In(zone).Format("Mon 02 Jan 15:04"), w.Reason.Code, w.Reason.Text))
			st.Rel(chat).MarkSent(now, brain.KindProactive)
		}
		jobs.Step(context.Background(), now)
	}
	return res, nil
}

// simClock is Simulate's clock, set at each step.
type simClock struct{ now time.Time }

func (c *simClock) Now() time.Time { return c.now }

// simHost is the plugins' host in Simulate: the state's relationships, a dream that only
// counts (no model), and the plugins' changes applied to their in-memory buckets.
type simHost struct {
	set     *plugins.Set
	store   pluginstest.Store
	st      *brain.State
	onDream func(brain.Wake)
}

func (h *simHost) Chats() ([]brain.Relationship, error) {
	rels := make([]brain.Relationship, 0, len(h.st.Rels))
	for _, r := range h.st.Rels {
		rels = append(rels, *r)
	}
	return rels, nil
}

func (h *simHost) Think(_ context.Context, w brain.Wake) (brain.Outcome, error) {
	h.onDream(w)
	return brain.Outcome{Requests: 1}, nil
}

func (h *simHost) Commit(_ context.Context, _, _ int64, intents []brain.Intent, at time.Time) error {
	for _, in := range intents {
		c, ok := in.(brain.PluginChange)
		if !ok {
			continue
		}
		if err := h.set.Apply(h.store[c.Plugin], c, at); err != nil {
			return err
		}
	}
	return nil
}

func (h *simHost) Recent(int64, int) ([]brain.Turn, error) { return nil, nil }

// simJobLog keeps the jobs' last runs in memory.
type simJobLog map[string]time.Time

func (l simJobLog) LastRun(key string) (time.Time, bool, error) { t, ok := l[key]; return t, ok, nil }
func (l simJobLog) SetLastRun(key string, t time.Time) error    { l[key] = t; return nil }

// PrintSim writes a simulation's result for people.
func PrintSim(w io.Writer, res SimResult) { PrintPerDay(w, res, "silent days") }

// PrintPerDay lists the wakes and the per-day table of proactive model calls; days says
// what kind of days they were.
func PrintPerDay(w io.Writer, res SimResult, days string) {
	for _, line := range res.Wakes {
		fmt.Fprintln(w, line)
	}
	total, checkins, dreams := 0, 0, 0
	for i, n := range res.PerDay {
		line := fmt.Sprintf("day %d: %d proactive model call(s)", i+1, n)
		if i < len(res.Checkins) && res.Checkins[i] > 0 {
			line += fmt.Sprintf(" (%d check-in(s))", res.Checkins[i])
			checkins += res.Checkins[i]
		}
		if i < len(res.Dreams) {
			line += fmt.Sprintf(", %d dream(s)", res.Dreams[i])
			n += res.Dreams[i]
			dreams += res.Dreams[i]
		}
		fmt.Fprintln(w, line)
		total += n
	}
	fmt.Fprintf(w, "total: %d model calls over %d %s", total, len(res.PerDay), days)
	if res.Dreams != nil {
		fmt.Fprintf(w, " (%d check-in(s), %d dream(s))", checkins, dreams)
	}
	fmt.Fprintln(w)
}
