package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestForgetLeavesNoTraceOnDisk: a marker word in 30 private messages and in a dead
// letter (an answer Telegram refused); after /forget the raw store file and a fresh `anima backup` hold it 0 times; `anima compact` refuses while
// the service runs and works once it stopped.
func TestForgetLeavesNoTraceOnDisk(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), "")
	store := filepath.Join(dir, "anima.db")
	const marker = "quetzalmarker"
	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 90*time.Second)
	for i := range 30 {
		tg.PushText(user, user, fmt.Sprintf("secret %d: my %s is blue", i, marker))
		if _, err := tg.WaitSent(ctx, i+1); err != nil {
			t.Fatalf("message %d not answered: %v", i, err)
		}
	}
	// One answer Telegram refuses for good is kept as a dead letter, marker and all.
	tg.FailNext("sendMessage", 1, 400, 0)
	tg.PushText(user, user, fmt.Sprintf("refused: my %s is blue", marker))
	for {
		out, _ := exec.Command(binary, "dead", "list", "--config", path).CombinedOutput()
		if strings.Contains(string(out), "undeliverable") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the refused answer was not kept as a dead letter:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	count := func(file string) int { return markerCount(t, file, marker) }
	backup := func(name string) string { return hotBackup(t, path, filepath.Join(dir, name)) }
	before := count(backup("before.db"))
	t.Logf("before /forget: a backup holds the marker %d times", before)
	if before == 0 {
		t.Fatal("the marker is not in a backup before /forget: the test proves nothing")
	}

	tg.PushText(user, user, "/forget")
	if _, err := tg.WaitSent(ctx, 31); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command(binary, "dead", "list", "--config", path).CombinedOutput(); !strings.Contains(string(out), "undeliverable") {
		t.Fatalf("the dead letter is gone before /forget yes:\n%s", out)
	}
	tg.PushCallback(user, user, fmt.Sprintf("/forget yes %d", user))
	sent, err := tg.WaitSent(ctx, 32)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sent[31].Visible, "Done.") {
		t.Fatalf("confirmation = %q", sent[31].Visible)
	}
	// The compaction follows the confirmation (about a second later).
	for count(store) != 0 {
		if ctx.Err() != nil {
			t.Fatalf("the store file still holds the marker %d times after /forget", count(store))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("after /forget: the store file holds the marker 0 times")
	if out, _ := exec.Command(binary, "dead", "list", "--config", path).CombinedOutput(); strings.TrimSpace(string(out)) != "no dead letters" {
		t.Errorf("anima dead list after /forget:\n%s", out)
	}
	after := count(backup("after.db"))
	t.Logf("after /forget: a fresh backup holds the marker %d times", after)
	if after != 0 {
		t.Errorf("a backup taken after /forget holds the marker %d times", after)
	}

	// The service still works on the compacted file.
	tg.PushText(user, user, "hello again")
	if _, err := tg.WaitSent(ctx, 33); err != nil {
		t.Fatalf("no answer after the compaction: %v", err)
	}

	// Offline compaction refuses while the service holds the store...
	if out, err := exec.Command(binary, "compact", "--config", path).CombinedOutput(); err == nil || !strings.Contains(string(out), "in use by another process") {
		t.Errorf("anima compact while running: err %v, output:\n%s", err, out)
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "store compacted") {
		t.Errorf("the service did not log its compaction:\n%s", p.stderr.String())
	}
	// ...and works once it stopped.
	if out, err := exec.Command(binary, "compact", "--config", path).CombinedOutput(); err != nil || !strings.Contains(string(out), "compacted") {
		t.Errorf("anima compact: err %v, output:\n%s", err, out)
	}
}

// markerCount is how many times marker stands in file's bytes (freed pages included).
func markerCount(t *testing.T, file, marker string) int {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(raw, []byte(marker))
}

// hotBackup runs `anima backup` for the configuration at path into out, and returns out.
func hotBackup(t *testing.T, path, out string) string {
	t.Helper()
	if b, err := exec.Command(binary, "backup", "--config", path, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("anima backup: %v\n%s", err, b)
	}
	return out
}
