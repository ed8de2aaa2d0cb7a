package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWritesTheTimeline runs anima-sim in-process on a shipped
// scenario and finds the three files.
func TestRunWritesTheTimeline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("user:\n  timezone: Europe/Berlin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"--config", cfg, "--scenario", "../../examples/sim/never-answers.yaml", "--out", out, "--days", "3"},
		&stdout, &stderr)
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

func TestRunRejectsAnUnknownScenarioKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nusr: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--config", cfg, "--scenario", bad, "--out", filepath.Join(dir, "o")}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "usr") {
		t.Errorf("stderr %q does not name the unknown key", stderr.String())
	}
}
