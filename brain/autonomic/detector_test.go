package autonomic

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// at returns t0 + m minutes.
func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// started returns a detector whose reference is ref (its first observation, at t0).
func started(cfg DetectorConfig, ref float64) Detector {
	d := NewDetector(cfg)
	d.Observe(t0, ref, 1)
	return d
}

func TestDetectorSlowDrift(t *testing.T) {
	t.Parallel()
	cfg := DefaultDetectorConfig()
	d := NewDetector(cfg)
	var emits []int
	tickToTick := 0
	for i := 0; i <= 100; i++ { // 0.500, 0.502, …, 0.700, one step a minute
		v := 0.50 + float64(i)*0.002
		if emit, _ := d.Observe(at(i), v, 1); emit {
			emits = append(emits, i)
		}
		if i > 0 { // the rejected design: compare with the previous tick only
			prev := NewDetector(cfg)
			prev.Observe(at(i-1), v-0.002, 1)
			if emit, _ := prev.Observe(at(i), v, 1); emit {
				tickToTick++
			}
		}
	}
	// v_ref 0.50 → needs |Δ| ≥ 0.05 → step 25 (0.550); v_ref 0.55 → Δ ≥ 0.055 → step 53
	// (0.606); v_ref 0.606 → Δ ≥ 0.0606 → step 84 (0.668); then Δ ≥ 0.0668 is past 0.70.
	want := []int{25, 53, 84}
	if len(emits) != len(want) {
		t.Fatalf("drift emitted at steps %v, want %v", emits, want)
	}
	for i := range want {
		if emits[i] != want[i] {
			t.Fatalf("drift emitted at steps %v, want %v", emits, want)
		}
	}
	if tickToTick != 0 {
		t.Errorf("tick-to-tick comparison emitted %d times, want 0 (a 0.002 step is below min_abs 0.02 and 0.4%% < 10%%)", tickToTick)
	}
	t.Logf("drift 0.50→0.70 in 0.002 steps: emissions at steps %v; tick-to-tick: %d", emits, tickToTick)
}

func TestDetectorThresholds(t *testing.T) {
	t.Parallel()
	def := DefaultDetectorConfig()
	capped := def
	capped.K = 1
	noFloor := capped
	noFloor.MinAbs = 0
	tests := []struct {
		name      string
		cfg       DetectorConfig
		ref, v    float64
		alertness float64
		want      bool
	}{
		{"alert: k=0.10 of 0.5 is 0.05, just under", def, 0.5, 0.549, 1, false},
		{"alert: k=0.10 of 0.5 is 0.05, reached", def, 0.5, 0.55, 1, true},
		{"drowsy: 1.5k=0.15 of 0.5 is 0.075, just under", def, 0.5, 0.574, 0, false},
		{"drowsy: 1.5k reached", def, 0.5, 0.575, 0, true},
		{"half alert: 1.25k=0.125 → 0.0625, under", def, 0.5, 0.562, 0.5, false},
		{"half alert: 1.25k reached", def, 0.5, 0.5625, 0.5, true},
		{"downward change counts too", def, 0.5, 0.45, 1, true},
		{"ref 0: min_abs 0.02 not reached", def, 0, 0.019, 1, false},
		{"ref 0: ε=0.05 makes 0.02 a 40% change", def, 0, 0.02, 1, true},
		{"ref 0, no floor, cap 0.5: 0.024/ε = 48%", noFloor, 0, 0.024, 1, false},
		{"ref 0, no floor, cap 0.5: 0.025/ε = 50%", noFloor, 0, 0.025, 1, true},
		{"min_abs floor: 0.019 is 38% of 0.05 but < 0.02", def, 0.05, 0.069, 1, false},
		{"min_abs floor reached", def, 0.05, 0.07, 1, true},
		{"cap: k=1 at alertness 0 would need 150%; capped at 50%, under", capped, 1, 1.49, 0, false},
		{"cap: 50% reached", capped, 1, 1.5, 0, true},
		{"negative ref uses |v_ref|", def, -0.5, -0.55, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := started(tc.cfg, tc.ref)
			emit, crossed := d.Observe(at(60), tc.v, tc.alertness)
			if emit != tc.want || crossed {
				t.Errorf("Observe(%v) from ref %v at alertness %v = %v (crossed %v), want %v",
					tc.v, tc.ref, tc.alertness, emit, crossed, tc.want)
			}
			if ref, _ := d.Ref(); tc.want && ref != tc.v || !tc.want && ref != tc.ref {
				t.Errorf("ref after = %v", ref)
			}
		})
	}
}

func TestRelThreshold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ k, a, want float64 }{
		{0.1, 1, 0.1}, {0.1, 0, 0.15}, {0.1, 0.5, 0.125}, {0.1, 7, 0.1}, {0.1, -3, 0.15}, {0.4, 0, 0.5}, {1, 1, 0.5},
	} {
		if got := RelThreshold(tc.k, tc.a, 0.5); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("RelThreshold(%v, %v) = %v, want %v", tc.k, tc.a, got, tc.want)
		}
	}
}

func TestDetectorFirstObservation(t *testing.T) {
	t.Parallel()
	cfg := DefaultDetectorConfig()
	cfg.Thresholds = []Threshold{{Value: 0.5, Dir: Up}}
	d := NewDetector(cfg)
	if _, ok := d.Ref(); ok {
		t.Fatal("fresh detector reports a reference")
	}
	if emit, _ := d.Observe(t0, 0.9, 1); emit {
		t.Error("first observation emitted; it only sets the reference")
	}
	if ref, ok := d.Ref(); !ok || ref != 0.9 {
		t.Errorf("ref = %v, %v; want 0.9, true", ref, ok)
	}
}

func TestDetectorRefractory(t *testing.T) {
	t.Parallel()
	cfg := DefaultDetectorConfig()
	cfg.Refractory = 10 * time.Minute
	d := started(cfg, 0.5)
	steps := []struct {
		min  int
		v    float64
		want bool
	}{
		{1, 0.6, true},   // +20%: emits, refractory until minute 11
		{5, 0.8, false},  // +33% but inside the refractory period
		{10, 0.8, false}, // 9 min after: still inside
		{11, 0.8, true},  // 10 min after the emission: allowed
		{12, 0.9, false}, // inside the new refractory period
	}
	for _, s := range steps {
		if emit, _ := d.Observe(at(s.min), s.v, 1); emit != s.want {
			t.Errorf("minute %d value %v: emit = %v, want %v", s.min, s.v, emit, s.want)
		}
	}
}

func TestDetectorCrossingInsideRefractory(t *testing.T) {
	t.Parallel()
	cfg := DefaultDetectorConfig()
	cfg.Refractory = time.Hour
	cfg.Thresholds = []Threshold{{Value: 0.5, Dir: Up}, {Value: 0.2, Dir: Down}}
	d := started(cfg, 0.3)
	steps := []struct {
		min           int
		v             float64
		emit, crossed bool
	}{
		{1, 0.4, true, false},   // +33%: emits, refractory for an hour
		{2, 0.49, false, false}, // +22.5% but refractory
		{3, 0.5, true, true},    // crosses 0.5 upward: emits inside the refractory period
		{4, 0.45, false, false}, // back below 0.5: 0.5 is an upward threshold only
		{5, 0.52, true, true},   // crosses upward again
		{6, 0.25, false, false}, // −52% but refractory; 0.2 not crossed
		{7, 0.19, true, true},   // crosses 0.2 downward
		{8, 0.21, false, false}, // upward through 0.2: not a crossing of a Down threshold
	}
	for _, s := range steps {
		emit, crossed := d.Observe(at(s.min), s.v, 1)
		if emit != s.emit || crossed != s.crossed {
			t.Errorf("minute %d value %v: (emit, crossed) = (%v, %v), want (%v, %v)", s.min, s.v, emit, crossed, s.emit, s.crossed)
		}
	}
}

func TestDetectorConfigValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultDetectorConfig().Validate(); err != nil {
		t.Fatalf("default: %v", err)
	}
	bad := DefaultDetectorConfig()
	bad.Thresholds = []Threshold{{Value: 0.5}}
	if err := bad.Validate(); err == nil {
		t.Error("threshold without direction accepted")
	}
	bad = DefaultDetectorConfig()
	bad.K = 0
	if err := bad.Validate(); err == nil {
		t.Error("k = 0 accepted")
	}
}

func TestDetectorObserveAllocs(t *testing.T) {
	d := NewDetector(DefaultDetectorConfig())
	i := 0
	if n := testing.AllocsPerRun(100, func() { i++; d.Observe(at(i), float64(i%7)/10, 0.5) }); n != 0 {
		t.Errorf("Observe allocates %v times", n)
	}
}
