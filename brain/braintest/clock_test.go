package braintest_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
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

func TestRecorder(t *testing.T) {
	t.Parallel()
	var r braintest.Recorder[int]
	if got := r.All(); len(got) != 0 {
		t.Fatalf("a new recorder holds %v", got)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			if err := r.Add(i); err != nil {
				t.Errorf("Add(%d) = %v", i, err)
			}
		})
	}
	wg.Wait()
	got := r.All()
	slices.Sort(got)
	if len(got) != 50 || got[0] != 0 || got[49] != 49 {
		t.Fatalf("after 50 concurrent adds All = %v", got)
	}
	got[0] = -1
	if r.All()[0] == -1 {
		t.Error("All hands out the recorder's own slice")
	}
}

// errorer records what CheckText reports instead of failing the test.
type errorer struct{ msgs []string }

func (*errorer) Helper() {}

func (e *errorer) Errorf(format string, args ...any) {
	e.msgs = append(e.msgs, fmt.Sprintf(format, args...))
}

func TestCheckText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		want, dont []string
		fails      []string
	}{
		{name: "all there, nothing avoided", want: []string{"owl", "Sam"}, dont: []string{"cat"}},
		{name: "one lacking", want: []string{"owl", "dog"}, fails: []string{`prompt lacks "dog"`}},
		{name: "one held", dont: []string{"Sam"}, fails: []string{`prompt has "Sam"`}},
		{name: "both", want: []string{"dog"}, dont: []string{"owl"}, fails: []string{`prompt lacks "dog"`, `prompt has "owl"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e errorer
			braintest.CheckText(&e, "prompt", "Sam calls me the owl", tc.want, tc.dont)
			if len(e.msgs) != len(tc.fails) {
				t.Fatalf("reports %q, want %d", e.msgs, len(tc.fails))
			}
			for i, f := range tc.fails {
				if !strings.HasPrefix(e.msgs[i], f+":\n") {
					t.Errorf("report %d = %q, want it to start %q", i, e.msgs[i], f)
				}
			}
		})
	}
}

func TestSpecTool(t *testing.T) {
	t.Parallel()
	spec := brain.ToolSpec{Name: "plugin_memo", Description: "notes", Profiles: []brain.Profile{brain.ProfileDream}}
	tool := braintest.SpecTool(spec)
	if got := tool.Spec(); got.Name != spec.Name || got.Description != spec.Description || !slices.Equal(got.Profiles, spec.Profiles) {
		t.Errorf("Spec = %+v, want %+v", got, spec)
	}
	if res, err := tool.Call(t.Context(), brain.ToolCall{}); err != nil || res.Content != "" {
		t.Errorf("Call = %+v, %v; want an empty result", res, err)
	}
}
