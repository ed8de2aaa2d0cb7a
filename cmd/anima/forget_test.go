package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCompactCLI: `anima compact` refuses while the service holds the store and
// compacts it once the service stopped. (The /forget erasure it serves is bot's
// TestForgetLeavesNoTraceOnDisk, in-process.)
func TestCompactCLI(t *testing.T) {
	t.Parallel()
	tg, _, path := fakeService(t)
	p := start(t, "run", "--config", path)
	say(waitCtx(t, 20*time.Second), t, tg, "something to store", 1)
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
