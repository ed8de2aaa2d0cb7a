package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveStore: a relative storage.path is taken relative to the configuration's
// folder; a store the old meaning (the working directory) finds and the new does not is
// kept, with a warning naming both paths (issue 36).
func TestResolveStore(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	t.Chdir(wd)
	file := filepath.Join(home, "anima.yaml")
	beside := filepath.Join(home, "data", "anima.db")
	resolve := func(p, file string) (string, string) {
		c := Default()
		c.Storage.Path = p
		w := c.ResolveStore(file)
		return c.Storage.Path, w
	}
	for _, tc := range []struct{ name, path, file, want string }{
		{"relative, beside the file", "./data/anima.db", file, beside},
		{"absolute", "/var/lib/anima/anima.db", file, "/var/lib/anima/anima.db"},
		{"the file in the working directory", "data/anima.db", "anima.yaml", "data/anima.db"},
		{"no file", "data/anima.db", "", "data/anima.db"},
	} {
		if got, w := resolve(tc.path, tc.file); got != tc.want || w != "" {
			t.Errorf("%s: %q → %q (warning %q), want %q and none", tc.name, tc.path, got, w, tc.want)
		}
	}
	// The old meaning finds a store, the new does not: kept where it is, with a warning.
	if err := os.MkdirAll(filepath.Join(wd, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, "data", "anima.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, w := resolve("./data/anima.db", file)
	if got != "./data/anima.db" || !strings.Contains(w, "using ./data/anima.db") || !strings.Contains(w, "move it to "+beside) ||
		!strings.Contains(w, "set storage.path to "+filepath.Join(wd, "data", "anima.db")) {
		t.Errorf("old store: %q, warning %q; want ./data/anima.db and a warning naming both paths and what to do", got, w)
	}
	// Both exist: the one beside the file wins, silently.
	if err := os.MkdirAll(filepath.Dir(beside), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, w := resolve("./data/anima.db", file); got != beside || w != "" {
		t.Errorf("both stores: %q, warning %q; want %q and none", got, w, beside)
	}
}
