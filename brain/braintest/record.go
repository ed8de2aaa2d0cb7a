package braintest

import (
	"context"
	"strings"
	"sync"

	"github.com/anima-bot/anima/brain"
)

// Recorder keeps what a fake is handed (the messages a sender sends, the waits a sleeper
// is asked for), in order. Its methods are safe for concurrent use; the zero value is empty.
type Recorder[T any] struct {
	mu  sync.Mutex
	got []T
}

// Add records v and returns nil, so that a fake's method can return Add's result.
func (r *Recorder[T]) Add(v T) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, v)
	return nil
}

// All returns a copy of what was recorded so far.
func (r *Recorder[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.got...)
}

// Errorer is the part of testing.TB that CheckText needs.
type Errorer interface {
	Helper()
	Errorf(format string, args ...any)
}

// CheckText fails t for each of want the text lacks and each of dont it holds; what names
// the text (a prompt, a block of it, an answer) in the failure.
func CheckText(t Errorer, what, text string, want, dont []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
	for _, w := range dont {
		if strings.Contains(text, w) {
			t.Errorf("%s has %q:\n%s", what, w, text)
		}
	}
}

// SpecTool is a brain.Tool that is only its spec: what a registry is given to check and
// offer. Its Call answers nothing and fails never.
type SpecTool brain.ToolSpec

// Spec returns the tool's spec.
func (s SpecTool) Spec() brain.ToolSpec { return brain.ToolSpec(s) }

// Call returns an empty result.
func (SpecTool) Call(context.Context, brain.ToolCall) (brain.ToolResult, error) {
	return brain.ToolResult{}, nil
}
