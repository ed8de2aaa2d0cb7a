package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// writeFile writes text to the file name in dir (a configuration, a scenario) and returns
// its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunWritesTheTimeline runs anima-sim in-process on a shipped
// scenario and finds the three files.
func TestRunWritesTheTimeline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml", "user:\n  timezone: Europe/Berlin\n")
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
	cfg := writeFile(t, dir, "config.yaml", "{}\n")
	bad := writeFile(t, dir, "bad.yaml", "name: x\nusr: {}\n")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--config", cfg, "--scenario", bad, "--out", filepath.Join(dir, "o")}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "usr") {
		t.Errorf("stderr %q does not name the unknown key", stderr.String())
	}
}

// TestLive: --live prints the dry run's estimate and, without --yes, exits 2 having sent
// nothing to the configured endpoint (the fake OpenAI server here); with --yes the run
// talks to it over HTTP with the configured key and the summary holds its words.
func TestLive(t *testing.T) {
	t.Parallel()
	const key = "sk-anima-sim-live"
	srv := openaitest.New(t)
	srv.SetKey(key)
	var n atomic.Int64 // a model that says one thing twice is cut short (a repeat)
	srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Answer(fmt.Sprintf("Live words %d.", n.Add(1)), "active", 0.9)
	})
	dir := t.TempDir()
	cfg := writeFile(t, dir, "config.yaml",
		fmt.Sprintf("user:\n  timezone: Europe/Berlin\nllm:\n  base_url: %s\n  api_key: %s\n  fast_model: small-one\n", srv.URL(), key))
	scenario := []string{"--config", cfg, "--scenario", "../../examples/sim/never-answers.yaml", "--days", "3"}
	tests := []struct {
		name     string
		args     []string
		code     int
		requests bool // the endpoint was sent requests
		stdout   string
		stderr   string
	}{
		{"yes without live", []string{"--yes"}, 2, false, "", "--yes goes with --live"},
		{"live without yes", []string{"--live"}, 2, false,
			`live run of "never answers" over 3 days: about 4 model requests`, "nothing was sent; add --yes"},
		{"live with yes", []string{"--live", "--yes"}, 0, true, "simulated 3 days", ""},
	}
	for _, tc := range tests { // in order: the endpoint's requests are counted across them
		out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		var stdout, stderr bytes.Buffer
		code := run(append(append([]string{}, scenario...), append([]string{"--out", out}, tc.args...)...), &stdout, &stderr)
		if code != tc.code {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", tc.name, code, tc.code, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%s: stdout %q and stderr %q, want %q and %q", tc.name, stdout.String(), stderr.String(), tc.stdout, tc.stderr)
		}
		if got := len(srv.Requests()) > 0; got != tc.requests {
			t.Fatalf("%s: the live endpoint got %d requests", tc.name, len(srv.Requests()))
		}
		if _, err := os.Stat(filepath.Join(out, "summary.txt")); (err == nil) != (tc.code == 0) {
			t.Errorf("%s: summary.txt: %v, want one only after a run", tc.name, err)
		}
	}
	summary, _ := os.ReadFile(filepath.Join(dir, "live-with-yes", "summary.txt"))
	for _, want := range []string{"live model: small-one and gpt-4o at " + srv.URL(), "  anima: Live words "} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, summary)
		}
	}
	for _, r := range srv.Requests() {
		if m := r.Body.Model; m != "small-one" && m != "gpt-4o" {
			t.Errorf("a request for model %q, want the configured ones", m)
		}
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("invalid requests: %v", v)
	}
}
