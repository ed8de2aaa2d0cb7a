package autonomic

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// idleState has n relationships whose last exchange was an hour before t0, spread over
// 10 minutes so they do not all change at once.
func idleState(n int) *brain.State {
	st := brain.NewState(time.UTC)
	for i := range n {
		st.Upsert(brain.Relationship{Chat: int64(i + 1), User: int64(i + 1),
			LastUserMsg: t0.Add(-time.Hour - time.Duration(i%600)*time.Second)})
	}
	return st
}

type fakeNeuron struct{ calls int }

func (*fakeNeuron) Name() string { return "fake" }
func (f *fakeNeuron) Check(now time.Time, _ *brain.State) (brain.Signal, bool) {
	f.calls++
	return brain.Signal{Type: "fake", Source: "fake", At: now}, f.calls == 2
}

func TestLayerSense(t *testing.T) {
	t.Parallel()
	extra := &fakeNeuron{}
	l := New(Default(), extra, nil)
	want := []string{"energy", "alertness", "time_of_day", "social_pressure", "thought_pressure", "fake"}
	if got := l.Names(); len(got) != len(want) || got[5] != "fake" || got[0] != "energy" {
		t.Fatalf("neurons %v, want %v", got, want)
	}
	var _ brain.Autonomic = l
	st := idleState(3)
	out := l.Sense(t0, st, nil)
	if len(out) != 0 {
		t.Fatalf("first tick emitted %+v", out)
	}
	out = l.Sense(t0.Add(time.Second), st, out[:0])
	if len(out) != 1 || out[0].Type != "fake" {
		t.Fatalf("second tick: %+v, want the extra neuron's signal", out)
	}
	if st.Rels[0].SocialPressure == 0 || st.Alertness == 0.5 {
		t.Errorf("layer did not write state: pressure %v, alertness %v", st.Rels[0].SocialPressure, st.Alertness)
	}
	// Five hours on, every chat's pressure has crossed 0.5.
	out = l.Sense(t0.Add(5*time.Hour), st, out[:0])
	var pressure int
	for _, s := range out {
		if s.Type == brain.SignalSocialPressure {
			pressure++
		}
	}
	if pressure != 3 {
		t.Errorf("%d social_pressure signals after 5 h, want 3: %+v", pressure, out)
	}
}

func TestLayerIdleTickAllocs(t *testing.T) {
	l := New(Default())
	st := idleState(1000)
	out := l.Sense(t0, st, nil)
	now := t0
	allocs := testing.AllocsPerRun(200, func() {
		now = now.Add(time.Second)
		out = l.Sense(now, st, out[:0])
	})
	if allocs != 0 {
		t.Errorf("idle Sense over 1000 relationships allocates %v times per tick, want 0", allocs)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatalf("default: %v", err)
	}
	c := Default()
	c.MinSilence = 0
	if err := c.Validate(); err == nil {
		t.Error("min_silence 0 accepted")
	}
}

// BenchmarkSenseIdle10k is one Sense over 10,000 idle relationships.
func BenchmarkSenseIdle10k(b *testing.B) {
	const n = 10_000
	l := New(Default())
	st := idleState(n)
	out := l.Sense(t0, st, nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// The clock moves within one minute: every value is recomputed, none changes
		// noticeably, so nothing is emitted (an idle tick).
		i++
		out = l.Sense(t0.Add(time.Duration(i%60)*time.Second), st, out[:0])
		if len(out) != 0 {
			b.Fatalf("idle tick emitted %d signals", len(out))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/relationship")
}
