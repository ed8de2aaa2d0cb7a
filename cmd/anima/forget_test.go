package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestCompactCLI: `anima compact` refuses while the service holds the store and
// compacts it once the service stopped. (The /forget erasure it serves is bot's
// TestForgetLeavesNoTraceOnDisk, in-process.)
func TestCompactCLI(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), "")
	p := start(t, "run", "--config", path)
	tg.PushText(user, user, "something to store")
	if _, err := tg.WaitSent(waitCtx(t, 20*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	// Offline compaction refuses while the service holds the store...
	if out, err := exec.Command(binary, "compact", "--config", path).CombinedOutput(); err == nil || !strings.Contains(string(out), "in use by another process") {
		t.Errorf("anima compact while running: err %v, output:\n%s", err, out)
	}
	p.stop(t)
	// ...and works once it stopped.
	if out, err := exec.Command(binary, "compact", "--config", path).CombinedOutput(); err != nil || !strings.Contains(string(out), "compacted") {
		t.Errorf("anima compact: err %v, output:\n%s", err, out)
	}
}
