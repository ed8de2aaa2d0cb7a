package plugins

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/anima-bot/anima/brain"
)

// Parts of a plugin, the part label of anima_plugin_errors_total.
const (
	PartTool    = "tool"
	PartNeuron  = "neuron"
	PartJob     = "job"
	PartContext = "context"
	PartState   = "state"
	PartCommand = "command"
	PartSearch  = "search"
)

// guard logs and counts a plugin's failures.
type guard struct {
	log    *slog.Logger
	errors *prometheus.CounterVec
}

func newGuard(log *slog.Logger, reg prometheus.Registerer) *guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &guard{log: log.With("component", "plugins"),
		errors: promauto.With(reg).NewCounterVec(prometheus.CounterOpts{Name: "anima_plugin_errors_total",
			Help: "Failures (errors and panics) of plugins, by plugin and part (tool, neuron, job, context, state, command, search)."},
			[]string{"plugin", "part"})}
}

// fail logs and counts one failure.
func (g *guard) fail(plugin, part string, err error) {
	g.errors.WithLabelValues(plugin, part).Inc()
	g.log.Error("plugin failed", "plugin", plugin, "part", part, "err", err)
}

// recovered turns a panic (r != nil) into a counted failure and reports whether there was one.
func (g *guard) recovered(plugin, part string, r any) bool {
	if r == nil {
		return false
	}
	g.fail(plugin, part, fmt.Errorf("panic: %v", r))
	return true
}

// guardedTool recovers a tool's panics and counts its errors. An error still goes back to
// the model (it is usually a bad argument the model corrects).
type guardedTool struct {
	plugin string
	t      brain.Tool
	g      *guard
}

func (t guardedTool) Spec() brain.ToolSpec { return t.t.Spec() }

func (t guardedTool) Call(ctx context.Context, call brain.ToolCall) (res brain.ToolResult, err error) {
	defer func() {
		if t.g.recovered(t.plugin, PartTool, recover()) {
			res, err = brain.ToolResult{}, fmt.Errorf("the tool %s failed", t.t.Spec().Name)
		}
	}()
	res, err = t.t.Call(ctx, call)
	if err != nil {
		t.g.errors.WithLabelValues(t.plugin, PartTool).Inc()
	}
	return res, err
}

// guardedNeuron recovers a neuron's panics: a panicking neuron reports nothing that tick.
type guardedNeuron struct {
	plugin string
	n      brain.Neuron
	g      *guard
}

func (n guardedNeuron) Name() string { return n.n.Name() }

func (n guardedNeuron) Check(now time.Time, st *brain.State) (sig brain.Signal, ok bool) {
	defer func() {
		if n.g.recovered(n.plugin, PartNeuron, recover()) {
			sig, ok = brain.Signal{}, false
		}
	}()
	return n.n.Check(now, st)
}

// contextSource is one plugin's prompt section, guarded.
type contextSource struct {
	plugin string
	c      Contextual
	g      *guard
}

func (c contextSource) section(w brain.Wake, now time.Time) (s brain.Section) {
	defer func() {
		if c.g.recovered(c.plugin, PartContext, recover()) {
			s = brain.Section{}
		}
	}()
	s = c.c.Context(w, now)
	s.Source = c.plugin
	return s
}
