package braintest_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

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
