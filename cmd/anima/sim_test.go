package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// TestSimScenarioRunsAnimaSim runs `anima sim --scenario S --out DIR` with the built
// binaries: anima hands the run to anima-sim beside it, which writes the three files.
func TestSimScenarioRunsAnimaSim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("user:\n  timezone: Europe/Berlin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(binary, "sim", "--config", cfg, "--scenario", "../../examples/sim/never-answers.yaml", "--out", out, "--days", "3")
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("anima sim: %v\n%s", err, stdout)
	}
	if !strings.Contains(string(stdout), "simulated 3 days") {
		t.Errorf("stdout = %q, want the --days override to hold", stdout)
	}
	for _, f := range []string{"timeline.csv", "timeline.png", "summary.txt"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestSimLiveAsksFirst: `anima sim --scenario S --out DIR --live` hands --live to
// anima-sim, which prints the expected requests and, without --yes, exits 2 having sent
// nothing to the configured endpoint (the fake OpenAI server).
func TestSimLiveAsksFirst(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	conf := fmt.Sprintf("user:\n  timezone: Europe/Berlin\nllm:\n  base_url: %s\n  api_key: sk-test\n", srv.URL())
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "sim", "--config", cfg, "--scenario", "../../examples/sim/never-answers.yaml",
		"--out", filepath.Join(dir, "out"), "--days", "2", "--live")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("anima sim --live: %v, want exit 2\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "model requests") || !strings.Contains(stderr.String(), "add --yes") {
		t.Errorf("stdout %q, stderr %q: want the estimate and how to spend it", stdout.String(), stderr.String())
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the configured endpoint got %d requests before --yes", n)
	}
}

// TestSimScenarioWithoutAnimaSim: without anima-sim beside it or on PATH, anima says how
// to get it.
func TestSimScenarioWithoutAnimaSim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lone := placeBinary(t, dir, "anima") // alone: no anima-sim beside it
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lone, "sim", "--config", cfg, "--scenario", "../../examples/sim/never-answers.yaml", "--out", filepath.Join(dir, "o"))
	cmd.Env = append(os.Environ(), "PATH="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "make build") {
		t.Errorf("anima sim without anima-sim: %v\n%s", err, out)
	}
}

func TestSimScenarioFlagsErrors(t *testing.T) {
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
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"scenario without out", []string{"--scenario", bad}, 2, "--out DIR"},
		{"out without scenario", []string{"--out", dir}, 2, "--scenario FILE"},
		{"live without scenario", []string{"--live"}, 2, "--live and --yes go with --scenario"},
		{"yes without scenario", []string{"--days", "2", "--yes"}, 2, "--live and --yes go with --scenario"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
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

// TestSimSilentRunsAnimaSim: `anima sim --days N` hands the silent days to anima-sim too,
// which prints them day by day.
func TestSimSilentRunsAnimaSim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("user:\n  timezone: Europe/Berlin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "sim", "--config", cfg, "--days", "3").CombinedOutput()
	if err != nil {
		t.Fatalf("anima sim --days 3: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "day 3:") || !strings.Contains(string(out), "over 3 silent days") {
		t.Errorf("output = %q, want three silent days", out)
	}
}

// TestServiceLinksNoTestFakes: the service binary carries no test fake, no simulator and
// no testing package (issue 27): they live where only anima-sim and the tests link them.
func TestServiceLinksNoTestFakes(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		ours := strings.HasPrefix(pkg, "github.com/anima-bot/anima/")
		if pkg == "net/http/httptest" || ours && strings.HasSuffix(pkg, "test") ||
			strings.HasPrefix(pkg, "github.com/anima-bot/anima/bot/sim") {
			t.Errorf("cmd/anima links %s", pkg)
		}
	}
	// testing comes in only with the Snowball stemmers' romance package, whose exported
	// test runners (testing_helpers.go) import it; nothing of ours may bring it.
	out, err = exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if slices.Contains(strings.Fields(imports), "testing") && pkg != "github.com/kljensen/snowball/romance" {
			t.Errorf("cmd/anima links testing through %s", pkg)
		}
	}
}

// TestSimUnderGoRun: `go run ./cmd/anima sim …` stopped with "needs the anima-sim binary"
// (issue 36). Under go run, with none beside it or on PATH, anima builds anima-sim into a
// temporary folder (this test binary is go-built too, and has no anima-sim beside it).
func TestSimUnderGoRun(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	t.Setenv("PATH", filepath.Dir(goBin)) // the go command, and no anima-sim
	bin, cleanup, err := simBinary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if !strings.Contains(string(out), "scenario") {
		t.Errorf("%s --help: %v\n%s", bin, err, out)
	}
	cleanup()
	if _, err := os.Stat(bin); err == nil {
		t.Errorf("%s left after cleanup", bin)
	}
}
