package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimScenarioCLI runs `anima sim --scenario S --out DIR` in-process on a shipped
// scenario and finds the three files.
func TestSimScenarioCLI(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("user:\n  timezone: Europe/Berlin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"sim", "--config", cfg, "--scenario", "../../examples/sim/never-answers.yaml", "--out", out, "--days", "3"},
		strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "simulated 3 days") {
		t.Errorf("stdout = %q, want the --days override to hold", stdout.String())
	}
	for _, f := range []string{"timeline.csv", "timeline.png", "summary.txt"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.txt"))
	if !strings.Contains(string(summary), "day 3: ") || strings.Contains(string(summary), "day 4: ") {
		t.Errorf("summary.txt is not a three-day table:\n%s", summary)
	}
}

func TestSimScenarioFlagsErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nusr: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"scenario without out", []string{"--scenario", bad}, 2, "--out DIR"},
		{"out without scenario", []string{"--out", dir}, 2, "--scenario FILE"},
		{"unknown key", []string{"--scenario", bad, "--out", filepath.Join(dir, "o")}, 1, "usr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"sim", "--config", cfg}, tc.args...)
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tc.want)
			}
		})
	}
}
