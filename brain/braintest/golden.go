package braintest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with the golden file testdata/golden/name byte for byte, or, when
// update (a test package's -update flag) is set, writes got there.
func Golden(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to write it): %v", err)
	}
	if !bytes.Equal(got, want) {
		i := firstDiff(got, want)
		t.Errorf("%s differs from its golden file (%d bytes, want %d); first difference at byte %d:\ngot:  %q\nwant: %q",
			name, len(got), len(want), i, around(got, i), around(want, i))
	}
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func around(b []byte, i int) string { return string(b[max(0, i-80):min(len(b), i+80)]) }
