// Package autonomic holds anima's cheap senses: neurons that read the brain's state on
// every tick and emit a signal only when something changed noticeably, judged by a
// Weber–Fechner change detector. Nothing here calls the network or a model, and an idle
// tick allocates nothing.
package autonomic

import (
	"fmt"
	"math"
	"time"
)

// Direction says which way a threshold must be crossed to count.
type Direction uint8

// Crossing directions.
const (
	Up   Direction = 1 << iota // from below the threshold to at or above it
	Down                       // from at or above the threshold to below it
	Both = Up | Down
)

// Threshold is a value whose crossing always emits, even inside the refractory period.
type Threshold struct {
	Value float64
	Dir   Direction
}

// DetectorConfig tunes a Detector. See DESIGN §5 for the rule it implements.
type DetectorConfig struct {
	// K is the relative change needed at full alertness (0.10); at alertness 0 it is 1.5·K.
	K float64
	// MinAbs is the smallest absolute change that can be noticed (0.02).
	MinAbs float64
	// Epsilon is the floor of the reference in the relative test (0.05), so a reference of
	// 0 does not make every change infinitely large.
	Epsilon float64
	// MaxRel caps the relative threshold (0.5).
	MaxRel float64
	// Refractory is how long after an emission no change-based emission happens.
	Refractory time.Duration
	// Thresholds always emit when crossed.
	Thresholds []Threshold
}

// DefaultDetectorConfig returns the numbers of DESIGN §5 with a 5-minute refractory
// period and no thresholds.
func DefaultDetectorConfig() DetectorConfig {
	return DetectorConfig{K: 0.10, MinAbs: 0.02, Epsilon: 0.05, MaxRel: 0.5, Refractory: 5 * time.Minute}
}

// Validate reports the first field that is out of range.
func (c DetectorConfig) Validate() error {
	switch {
	case !(c.K > 0):
		return fmt.Errorf("detector k = %v: must be > 0", c.K)
	case !(c.MinAbs >= 0):
		return fmt.Errorf("detector min_abs = %v: must be ≥ 0", c.MinAbs)
	case !(c.Epsilon > 0):
		return fmt.Errorf("detector epsilon = %v: must be > 0", c.Epsilon)
	case !(c.MaxRel > 0):
		return fmt.Errorf("detector max_rel = %v: must be > 0", c.MaxRel)
	case c.Refractory < 0:
		return fmt.Errorf("detector refractory = %s: must be ≥ 0", c.Refractory)
	}
	for i, th := range c.Thresholds {
		if th.Dir&Both == 0 {
			return fmt.Errorf("detector thresholds[%d]: direction must be Up, Down or Both", i)
		}
	}
	return nil
}

// tolerance absorbs floating-point noise so a change of exactly the threshold counts.
const tolerance = 1e-9

// RelThreshold is the relative change needed at the given alertness:
// k·(1 + 0.5·(1 − alertness)), alertness clamped to 0..1, capped at maxRel.
func RelThreshold(k, alertness, maxRel float64) float64 {
	a := min(1, max(0, alertness))
	return min(k*(1+0.5*(1-a)), maxRel)
}

// Detector is a Weber–Fechner change detector. It compares each observation with the
// reference v_ref — the value at the last emission, not the previous observation — so a
// slow drift is noticed once it has grown past the threshold.
//
// The first observation only sets the reference and emits nothing: a baseline is not a
// change. Detector is a small value; it never allocates.
type Detector struct {
	cfg      DetectorConfig
	ref      float64 // value at the last emission (or the first observation)
	last     float64 // previous observation, for threshold crossings
	lastEmit time.Time
	started  bool
}

// NewDetector returns a detector with cfg.
func NewDetector(cfg DetectorConfig) Detector { return Detector{cfg: cfg} }

// Ref returns the reference value (the value at the last emission) and whether the
// detector has observed anything yet.
func (d *Detector) Ref() (float64, bool) { return d.ref, d.started }

// Noticeable reports whether v differs noticeably from the reference at alertness,
// ignoring the refractory period and thresholds.
func (d *Detector) Noticeable(v, alertness float64) bool {
	diff := math.Abs(v - d.ref)
	if diff+tolerance < d.cfg.MinAbs {
		return false
	}
	return diff/max(math.Abs(d.ref), d.cfg.Epsilon)+tolerance >= RelThreshold(d.cfg.K, alertness, d.cfg.MaxRel)
}

// Observe feeds the value v seen at now. It returns emit when the change is to be
// signalled, and crossed when the emission is due to a threshold crossing (which emits
// even inside the refractory period). An emission makes v the new reference.
func (d *Detector) Observe(now time.Time, v, alertness float64) (emit, crossed bool) {
	if !d.started {
		d.started = true
		d.ref, d.last = v, v
		return false, false
	}
	prev := d.last
	d.last = v
	for _, th := range d.cfg.Thresholds {
		if (th.Dir&Up != 0 && prev < th.Value && v >= th.Value) ||
			(th.Dir&Down != 0 && prev >= th.Value && v < th.Value) {
			d.ref, d.lastEmit = v, now
			return true, true
		}
	}
	if !d.lastEmit.IsZero() && now.Sub(d.lastEmit) < d.cfg.Refractory {
		return false, false
	}
	if !d.Noticeable(v, alertness) {
		return false, false
	}
	d.ref, d.lastEmit = v, now
	return true, false
}
