package braintest

import (
	"context"
	"testing"
	"time"
)

// Within is a context for a test's waits that ends after d, or when the test does.
func Within(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
