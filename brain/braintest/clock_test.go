package braintest_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/braintest"
)

// t0 is where the tests start their clocks and events.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func TestClock(t *testing.T) {
	t.Parallel()
	c := braintest.NewClock(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { c.Advance(time.Second) })
	}
	wg.Wait()
	if got, want := c.Now(), t0.Add(100*time.Second); !got.Equal(want) {
		t.Errorf("after 100 concurrent one-second advances Now = %v, want %v", got, want)
	}
	c.Set(t0.Add(-time.Hour))
	if got, want := c.Now(), t0.Add(-time.Hour); !got.Equal(want) {
		t.Errorf("after Set Now = %v, want %v", got, want)
	}
	var zero braintest.Clock
	if !zero.Now().IsZero() {
		t.Errorf("zero Clock stands at %v, want the zero time", zero.Now())
	}
}

func TestGaps(t *testing.T) {
	t.Parallel()
	at := []time.Time{t0.Add(time.Second), t0.Add(3 * time.Second), t0.Add(3 * time.Second)}
	if got, want := braintest.Gaps(t0, at), []time.Duration{time.Second, 2 * time.Second, 0}; !slices.Equal(got, want) {
		t.Errorf("Gaps = %v, want %v", got, want)
	}
	if got := braintest.Gaps(t0, nil); len(got) != 0 {
		t.Errorf("Gaps of no events = %v, want none", got)
	}
}

// fataler records what Zone reports instead of ending the test.
type fataler struct{ args []any }

func (*fataler) Helper() {}

func (f *fataler) Fatalf(_ string, args ...any) { f.args = args }

func TestZone(t *testing.T) {
	t.Parallel()
	var f fataler
	if loc := braintest.Zone(&f, "Europe/Berlin"); loc == nil || loc.String() != "Europe/Berlin" || f.args != nil {
		t.Errorf("Zone(Europe/Berlin) = %v, reported %v", loc, f.args)
	}
	braintest.Zone(&f, "Nowhere/Atlantis")
	if !slices.Contains(f.args, any("Nowhere/Atlantis")) {
		t.Errorf("Zone of an unknown zone reported %v, want a failure naming it", f.args)
	}
}
