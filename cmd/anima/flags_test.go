package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestFlagsAfterFile: every command takes its flags before, between or after FILE; the
// forms of issue 36 (`backup config.yaml --out F`, `check FILE --offline`, …) were
// refused with "one configuration file, not 3 arguments" and no word of what to do.
func TestFlagsAfterFile(t *testing.T) {
	t.Setenv("ANIMA_CONFIG", "")
	for _, args := range [][]string{
		{"backup", "config.yaml", "--out", "anima-backup.db"},
		{"check", "h.yaml", "--offline"},
		{"health", "h.yaml", "--timeout", "1s"},
		{"chat", "h.yaml", "--store", "x.db", "--metrics"},
		{"sim", "h.yaml", "--scenario", "examples/sim/never-answers.yaml", "--out", "sim/"},
		{"sim", "--days", "3", "h.yaml", "--live"},
		{"mcp", "list", "h.yaml", "-v"},
		{"dead", "show", "--config", "h.yaml", "3"},
		{"bench", "memory", "a.json", "--k", "5", "b.json"},
	} {
		var stderr strings.Builder
		if _, code, ok := parse(args, strings.NewReader(""), io.Discard, &stderr); !ok {
			t.Errorf("%q refused (exit %d):\n%s", args, code, stderr.String())
		}
	}

	f := newFlags("sim", io.Discard)
	if _, ok := f.parse([]string{"--days", "3", "h.yaml", "--scenario", "s.yaml", "--out", "o/"}, io.Discard); !ok {
		t.Fatal("sim refused")
	}
	if want := []string{"--days", "3", "--scenario", "s.yaml", "--out", "o/"}; *f.config != "h.yaml" || !slices.Equal(f.args, want) {
		t.Errorf("config %q, flags handed to anima-sim %q; want h.yaml and %q", *f.config, f.args, want)
	}
	f = newFlags("check", io.Discard)
	if _, ok := f.parse([]string{"--offline", "--", "-odd.yaml"}, io.Discard); !ok || *f.config != "-odd.yaml" || !*f.offline {
		t.Errorf("after --: config %q offline %v, want -odd.yaml and true", *f.config, *f.offline)
	}
}

// TestFlagMistakeSaysWhatToDo: a real mistake is refused (exit 2) and the error says what
// to give instead.
func TestFlagMistakeSaysWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "a.yaml", "b.yaml", "--out", "x"}, "one configuration file, not 2 arguments: [\"a.yaml\" \"b.yaml\"]; every other argument is a flag, before or after FILE (anima backup [FILE] --out F); `anima backup --help` lists them"},
		{[]string{"check", "a.yaml", "--config", "b.yaml"}, "two configuration files, --config b.yaml and a.yaml: give one"},
		{[]string{"health", "a.yaml", "--out", "x"}, "flag provided but not defined: -out"},
		{[]string{"mcp", "list", "a.yaml", "b.yaml"}, "one configuration file, not 2 arguments"},
		{[]string{"dead", "lsit"}, "want list, show ID or retry ID, then FILE (optional)"},
	} {
		var stderr strings.Builder
		_, code, ok := parse(tc.args, strings.NewReader(""), io.Discard, &stderr)
		if ok || code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: ok %v exit %d, want 2 saying %q:\n%s", tc.args, ok, code, tc.want, stderr.String())
		}
	}
}
