package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// deadCLI runs `anima dead ARGS --config path` and returns its output and exit code.
func deadCLI(t *testing.T, path string, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(binary, append(append([]string{"dead"}, args...), "--config", path)...).CombinedOutput()
	code := 0
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("anima dead %v: %v", args, err)
		}
		code = exit.ExitCode()
	}
	return string(out), code
}

// TestDeadLetterCLI: two answers Telegram refuses for good are kept; `anima dead`
// lists and shows them through the running service, and `retry` sends the first again at
// once. Once the service stopped, the CLI opens the store itself: the second, retried
// then, is sent at the next start.
func TestDeadLetterCLI(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), "")
	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 60*time.Second)

	tg.FailNext("sendMessage", 2, 400, 0)
	for i, text := range []string{"first words", "second words"} {
		tg.PushText(user, user, text)
		if _, err := tg.WaitCalls(ctx, "sendMessage", i+1); err != nil {
			t.Fatal(err)
		}
	}
	// The refused answers are kept just after Telegram answered.
	var list string
	for !strings.Contains(list, "\n2 ") {
		if ctx.Err() != nil {
			t.Fatalf("anima dead list never showed two dead letters:\n%s", list)
		}
		list, _ = deadCLI(t, path, "list")
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(list, "ID") || strings.Count(list, "undeliverable") != 2 || !strings.Contains(list, "Bad Request") {
		t.Errorf("anima dead list:\n%s\nwant two undeliverable answers with Telegram's reason", list)
	}
	if out, code := deadCLI(t, path, "show", "1"); code != 0 || !strings.Contains(out, `"text": "echo: first words"`) || !strings.Contains(out, `"kind": "undeliverable"`) {
		t.Errorf("anima dead show 1 (exit %d):\n%s", code, out)
	}
	if out, code := deadCLI(t, path, "retry", "1"); code != 0 || !strings.Contains(out, "retried dead letter 1") {
		t.Fatalf("anima dead retry 1 (exit %d):\n%s", code, out)
	}
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sent[0].Visible != "echo: first words" {
		t.Errorf("sent %q after the retry, want the refused answer", sent[0].Visible)
	}
	if out, code := deadCLI(t, path, "show", "1"); code != 1 || !strings.Contains(out, "no such dead letter") {
		t.Errorf("anima dead show 1 after its retry (exit %d, want 1):\n%s", code, out)
	}
	if out, code := deadCLI(t, path, "show", "x"); code != 2 {
		t.Errorf("anima dead show x: exit %d, want 2 (usage):\n%s", code, out)
	}
	p.stop(t)

	// Stopped: the CLI opens the store; the retried answer waits in the outbox.
	if out, code := deadCLI(t, path, "list"); code != 0 || strings.Count(out, "undeliverable") != 1 || !strings.Contains(out, "\n2 ") {
		t.Errorf("anima dead list with the service stopped (exit %d):\n%s", code, out)
	}
	if out, code := deadCLI(t, path, "retry", "2"); code != 0 || !strings.Contains(out, "back in the outbox") {
		t.Fatalf("anima dead retry 2 with the service stopped (exit %d):\n%s", code, out)
	}
	if out, _ := deadCLI(t, path, "list"); strings.TrimSpace(out) != "no dead letters" {
		t.Errorf("anima dead list after both retries:\n%s", out)
	}
	start(t, "run", "--config", path)
	sent, err = tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sent[1].Visible != "echo: second words" {
		t.Errorf("sent %q at the next start, want the second refused answer", sent[1].Visible)
	}
}
