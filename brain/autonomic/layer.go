package autonomic

import (
	"fmt"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Config tunes the autonomic layer.
type Config struct {
	// Detector is the change detector every built-in neuron uses (each adds its own
	// thresholds).
	Detector DetectorConfig
	// MinSilence is proactive.min_silence: the silence at which social pressure is 0.5.
	MinSilence time.Duration
	// QuietHours is proactive.quiet_hours: silence inside them builds no social pressure
	// (brain.Waking).
	QuietHours brain.QuietHours
	Energy     EnergyConfig
	Alertness  AlertnessConfig
	Thought    ThoughtConfig
}

// Default returns the configuration of DESIGN §5 with min_silence 6 h.
func Default() Config {
	return Config{
		Detector:   DefaultDetectorConfig(),
		MinSilence: 6 * time.Hour,
		Energy:     EnergyConfig{DrainPerRun: 0.02, NightHalfLife: time.Hour},
		Alertness:  AlertnessConfig{ActivityHalfLife: 30 * time.Minute},
		Thought:    ThoughtConfig{AgeUnit: time.Hour},
	}
}

// Validate names the first bad setting.
func (c Config) Validate() error {
	if err := c.Detector.Validate(); err != nil {
		return err
	}
	switch {
	case c.MinSilence <= 0:
		return fmt.Errorf("min_silence = %s: must be > 0", c.MinSilence)
	case c.Energy.DrainPerRun < 0 || c.Energy.DrainPerRun > 1:
		return fmt.Errorf("energy drain_per_run = %v: must be within 0..1", c.Energy.DrainPerRun)
	case c.Energy.NightHalfLife < 0:
		return fmt.Errorf("energy night_half_life = %s: must be ≥ 0", c.Energy.NightHalfLife)
	case c.Alertness.ActivityHalfLife < 0:
		return fmt.Errorf("alertness activity_half_life = %s: must be ≥ 0", c.Alertness.ActivityHalfLife)
	case c.Thought.AgeUnit < 0:
		return fmt.Errorf("thought age_unit = %s: must be ≥ 0", c.Thought.AgeUnit)
	}
	return nil
}

// multiSensor is a neuron that may emit several signals per tick (one per relationship).
type multiSensor interface {
	Sense(now time.Time, st *brain.State, out []brain.Signal) []brain.Signal
}

type neuron struct {
	n     brain.Neuron
	multi multiSensor // n itself when it can emit several signals per tick
}

// Layer is the autonomic layer: it runs its neurons in order — energy, alertness, time of
// day, social pressure, thought pressure, then the extra ones — and collects what they
// emit.
type Layer struct {
	neurons []neuron
}

var _ brain.Autonomic = (*Layer)(nil)

// New returns a layer with the built-in neurons configured by cfg, followed by extra
// (plugin) neurons. A neuron that also has a method
// Sense(now, st, out []brain.Signal) []brain.Signal is run through it, so it can emit
// several signals per tick. Nil extras are skipped.
func New(cfg Config, extra ...brain.Neuron) *Layer {
	all := []brain.Neuron{
		NewEnergy(cfg.Energy, cfg.Detector),
		NewAlertness(cfg.Alertness, cfg.Detector),
		NewTimeOfDay(),
		NewSocialPressure(cfg.MinSilence, cfg.QuietHours, cfg.Detector),
		NewThoughtPressure(cfg.Thought, cfg.Detector),
	}
	l := &Layer{neurons: make([]neuron, 0, len(all)+len(extra))}
	for _, n := range append(all, extra...) {
		if n == nil {
			continue
		}
		m, _ := n.(multiSensor)
		l.neurons = append(l.neurons, neuron{n: n, multi: m})
	}
	return l
}

// Names lists the layer's neurons in the order they run.
func (l *Layer) Names() []string {
	names := make([]string, len(l.neurons))
	for i, n := range l.neurons {
		names[i] = n.n.Name()
	}
	return names
}

// Sense implements brain.Autonomic.
func (l *Layer) Sense(now time.Time, st *brain.State, out []brain.Signal) []brain.Signal {
	for _, n := range l.neurons {
		if n.multi != nil {
			out = n.multi.Sense(now, st, out)
			continue
		}
		if s, ok := n.n.Check(now, st); ok {
			out = append(out, s)
		}
	}
	return out
}
