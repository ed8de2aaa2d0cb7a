// Package plugins is the API for extending anima: a plugin contributes tools the model may
// call and neurons the autonomic layer runs every tick. Plugins are passed to bot.Run
// explicitly (no init() registration); their tools go through the same registry as the
// core tools, so they obey the same strict-schema and capability-profile rules.
package plugins

import "github.com/anima-bot/anima/brain"

// Plugin is one extension of anima.
type Plugin interface {
	// Name is a short lower-case identifier, used in logs and as the tools' name prefix
	// (tools are named "<name>_<verb>").
	Name() string
	// Tools are the tools the plugin offers the model (may be empty).
	Tools() []brain.Tool
	// Neurons are cheap sensors run on every tick (may be empty). They must not block,
	// call the network or allocate on an idle tick.
	Neurons() []brain.Neuron
}

// ToolRegistry is where plugin tools are registered (cognition's registry satisfies it).
type ToolRegistry interface {
	Register(t brain.Tool) error
}

// Collect registers every plugin's tools with reg and returns all their neurons.
func Collect(reg ToolRegistry, ps ...Plugin) ([]brain.Neuron, error) {
	var neurons []brain.Neuron
	for _, p := range ps {
		for _, t := range p.Tools() {
			if err := reg.Register(t); err != nil {
				return nil, &Error{Plugin: p.Name(), Err: err}
			}
		}
		neurons = append(neurons, p.Neurons()...)
	}
	return neurons, nil
}

// Error is a plugin that could not be installed.
type Error struct {
	Plugin string
	Err    error
}

func (e *Error) Error() string { return "plugin " + e.Plugin + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
