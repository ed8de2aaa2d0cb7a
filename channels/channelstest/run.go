package channelstest

import (
	"context"
	"testing"
	"time"
)

// Run runs run (a channel's Run, or a server's) in a goroutine until the test ends; then
// it cancels run's context and waits up to 10 seconds for it to return, failing tb if it
// returns an error or does not return. The channel it returns is closed once run has
// returned: a test waiting for run to be ready sees it end early.
func Run(tb testing.TB, run func(ctx context.Context) error) <-chan struct{} {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ended := make(chan struct{})
	go func() {
		done <- run(ctx)
		close(ended)
	}()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			tb.Error("Run did not return within 10 s of the test's end")
		}
	})
	return ended
}
