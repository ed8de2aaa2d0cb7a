package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestInitBinary: `anima init` from flags alone writes a 0600 config that `anima check`
// accepts and prints the command to start; a second run leaves the valid file alone and
// exits 0 (so `anima init && anima run` works every time), and one over a file that
// would not run refuses, naming --force.
// (The dialogue itself is tested in-process in bot/setup.)
func TestInitBinary(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	path := filepath.Join(t.TempDir(), "anima.yaml")
	args := []string{"init", "--yes", "--token", telegramtest.DefaultToken, "--api-url", tg.URL,
		"--llm-base-url", ai.URL(), "--model", "qwen2.5:7b", "--user-id", "4242", "--out", path}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "ANIMA_CONFIG=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "anima run "+path) {
		t.Errorf("init does not print the command to start:\n%s", out)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config %v, want mode 0600 (%v)", st, err)
	}
	if out, err := exec.Command(binary, "check", path).CombinedOutput(); err != nil {
		t.Errorf("check of the written config: %v\n%s", err, out)
	}
	out, err = exec.Command(binary, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "already written and valid") {
		t.Errorf("second init: %v, want exit 0 and the file left alone:\n%s", err, out)
	}
	if err := os.WriteFile(path, []byte("telegram: {token: ''}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(binary, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--force") {
		t.Errorf("init over a file that would not run: %v, want a refusal naming --force:\n%s", err, out)
	}
}
