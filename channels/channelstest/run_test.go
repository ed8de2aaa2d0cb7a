package channelstest_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/anima-bot/anima/channels/channelstest"
)

// endingTB is a test whose cleanups the test runs by hand and whose failures it reads.
type endingTB struct {
	*testing.T
	cleanups []func()
	errs     []string
}

func (e *endingTB) Cleanup(fn func())         { e.cleanups = append(e.cleanups, fn) }
func (e *endingTB) Error(args ...any)         { e.errs = append(e.errs, fmt.Sprint(args...)) }
func (e *endingTB) Errorf(f string, a ...any) { e.errs = append(e.errs, fmt.Sprintf(f, a...)) }
func (e *endingTB) end() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// TestRun: the function runs until the test ends, then sees its context cancelled and is
// waited for; an error it returns fails the test.
func TestRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want int // failures
	}{
		{"returns nil", nil, 0},
		{"returns an error", errors.New("listener closed"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := &endingTB{T: t}
			var started, stopped atomic.Bool
			ready := make(chan struct{})
			ended := channelstest.Run(tb, func(ctx context.Context) error {
				started.Store(true)
				close(ready)
				<-ctx.Done()
				stopped.Store(true)
				return tc.err
			})
			<-ready
			select {
			case <-ended:
				t.Fatal("ended before the test did")
			default:
			}
			if stopped.Load() {
				t.Fatal("stopped before the test ended")
			}
			tb.end()
			<-ended
			if !started.Load() || !stopped.Load() {
				t.Errorf("started %v, stopped %v once the test ended; want both", started.Load(), stopped.Load())
			}
			if len(tb.errs) != tc.want {
				t.Errorf("failures %q, want %d", tb.errs, tc.want)
			}
		})
	}
}
