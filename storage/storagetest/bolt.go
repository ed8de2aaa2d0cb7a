package storagetest

import (
	"testing"

	"github.com/anima-bot/anima/storage"
)

// Open opens the bbolt store at path (in tb.TempDir(), say) for a test that needs the
// file itself (a reopen, storage's own deletions, Open's migrations), and closes it when
// the test ends.
func Open(tb testing.TB, path string) *storage.Store {
	tb.Helper()
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}
