package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
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
	tg, _, path := fakeService(t)
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
	if out, code := deadCLI(t, path, "show", "1"); code != 0 || !strings.Contains(out, "\ntext:    echo: first words\n") || !strings.Contains(out, "\nkind:    undeliverable\n") {
		t.Errorf("anima dead show 1 (exit %d):\n%s", code, out)
	}
	if out, code := deadCLI(t, path, "retry", "1"); code != 0 || !strings.Contains(out, "retried dead letter 1") {
		t.Fatalf("anima dead retry 1 (exit %d):\n%s", code, out)
	}
	if got := firstSent(ctx, t, tg); got != "echo: first words" {
		t.Errorf("sent %q after the retry, want the refused answer", got)
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
	sent, err := tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sent[1].Visible != "echo: second words" {
		t.Errorf("sent %q at the next start, want the second refused answer", sent[1].Visible)
	}
}

// TestDeadShowEscapedAndRetryRefused: with the service stopped, `anima dead show` prints a
// letter whose text and reason carry terminal escapes (a title change, a screen clear, a
// carriage return, C1 CSI) as visible escapes, never the raw bytes, with the parts
// already delivered; `anima dead list` escapes the reason too; `anima dead retry` of a
// letter for a user no longer in telegram.allowed_users is refused and the letter kept.
func TestDeadShowEscapedAndRetryRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeConfig(t, dir, "http://127.0.0.1:1", "http://127.0.0.1:1", "")
	st, err := storage.Open(filepath.Join(dir, "anima.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const removed = 777
	hostile := "\x1b]0;owned\a\x1b[2Jhi\rthere\u009b31m"
	msg := brain.SendMessage{Chat: user, Text: hostile, Kind: brain.KindReply, SkipParts: 1}
	for _, d := range []brain.DeadLetter{
		{Kind: brain.DeadUndeliverable, Chat: user, User: user, At: time.Now(), Reason: "400 \x1b[31mBad\x1b[0m", Message: &msg},
		{Kind: brain.DeadRunFailed, Chat: removed, User: removed, At: time.Now(), Reason: "model said no",
			Signals: []brain.Signal{{ID: 1, Type: brain.SignalUserMessage, Chat: removed, User: removed, Text: "hello"}}},
	} {
		if _, err := st.Bury(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	raw := func(out string) bool { return strings.ContainsAny(out, "\x1b\a\r\u009b") }

	out, code := deadCLI(t, path, "show", "1")
	if code != 0 || raw(out) {
		t.Fatalf("anima dead show 1 (exit %d) printed raw control characters:\n%q", code, out)
	}
	for _, want := range []string{
		`text:    \x1b]0;owned\a\x1b[2Jhi\rthere\u009b31m` + "\n",
		`reason:  400 \x1b[31mBad\x1b[0m` + "\n",
		"1 parts delivered before the refusal",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("anima dead show 1 lacks %q:\n%s", want, out)
		}
	}
	if out, code := deadCLI(t, path, "list"); code != 0 || raw(out) || !strings.Contains(out, `400 \x1b[31mBad\x1b[0m`) {
		t.Errorf("anima dead list (exit %d), want the reason escaped:\n%q", code, out)
	}

	out, code = deadCLI(t, path, "retry", "2")
	if code != 1 || !strings.Contains(out, "dead letter 2 not retried (kept): user 777: not in telegram.allowed_users") {
		t.Errorf("anima dead retry 2 for a removed user (exit %d, want 1):\n%s", code, out)
	}
	if out, _ := deadCLI(t, path, "list"); !strings.Contains(out, "\n2 ") {
		t.Errorf("the refused letter is not kept:\n%s", out)
	}
	if out, code := deadCLI(t, path, "retry", "1"); code != 0 || !strings.Contains(out, "from part 2") {
		t.Errorf("anima dead retry 1 (exit %d), want it sent from part 2:\n%s", code, out)
	}
}

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
