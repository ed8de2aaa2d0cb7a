package brain

import (
	"math"
	"time"
)

// Pressure is the social pressure after silence for a chat whose proactive min_silence is
// minSilence: p = 1 − 2^(−silence/minSilence). It is 0 right after an exchange, 0.5 at
// minSilence, 0.75 at twice that, and tends to 1. The autonomic neuron and the
// aggregation's wake rule share this one curve.
func Pressure(silence, minSilence time.Duration) float64 {
	if silence <= 0 || minSilence <= 0 {
		return 0
	}
	return 1 - math.Exp2(-float64(silence)/float64(minSilence))
}

// Habituated is the silence proactive contact needs after n unanswered proactive
// messages: base × 2^n, and false when that overflows (contact is then out of reach).
func Habituated(base time.Duration, n int) (time.Duration, bool) {
	if n <= 0 {
		return base, true
	}
	if n >= 62 || base > math.MaxInt64>>n {
		return 0, false
	}
	return base << n, true
}
