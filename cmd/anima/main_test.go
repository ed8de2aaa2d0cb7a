package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// binary is the anima binary built once for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "anima-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "anima")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build anima: %v\n%s", err, out)
		os.Exit(1)
	}
	// anima sim --scenario runs anima-sim from beside the anima binary.
	out, err = exec.Command("go", "build", "-o", filepath.Join(dir, "anima-sim"), "../anima-sim").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build anima-sim: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

const user = 4242

// writeConfig writes a configuration pointing at the fakes, allowing user, and returns
// its path; extra is appended (proactive contact is off unless extra configures it).
func writeConfig(t *testing.T, dir, tgURL, aiURL, extra string) string {
	t.Helper()
	return writeConfigWith(t, dir, testConfig{tgURL: tgURL, aiURL: aiURL, extra: extra})
}

// offlineConfig writes a configuration (see writeConfig) whose Telegram and model are at
// an address nothing answers on, in a folder of its own, and returns its path.
func offlineConfig(t *testing.T, extra string) string {
	t.Helper()
	return writeConfig(t, t.TempDir(), "http://127.0.0.1:1", "http://127.0.0.1:1/v1", extra)
}

// testConfig is what a test's configuration differs in.
type testConfig struct {
	tgURL, aiURL string
	users        []int64 // allowed users (default: user)
	metrics      string  // metrics.listen (default 127.0.0.1:0)
	extra        string  // appended YAML
}

// writeConfigWith writes the configuration c describes into dir and returns its path.
func writeConfigWith(t *testing.T, dir string, c testConfig) string {
	t.Helper()
	if len(c.users) == 0 {
		c.users = []int64{user}
	}
	if c.metrics == "" {
		c.metrics = "127.0.0.1:0"
	}
	users := make([]string, len(c.users))
	for i, u := range c.users {
		users[i] = strconv.FormatInt(u, 10)
	}
	cfg := fmt.Sprintf(`telegram:
  token: ${ANIMA_TELEGRAM_TOKEN}
  api_url: %s
  allowed_users: [%s]
llm:
  base_url: %s
  api_key: test
  request_timeout: 10s
storage:
  path: %s
metrics:
  listen: %q
brain:
  tick: 100ms
%s`, c.tgURL, strings.Join(users, ", "), c.aiURL, filepath.Join(dir, "anima.db"), c.metrics, c.extra)
	if !strings.Contains(c.extra, "proactive:") {
		cfg += "\nproactive: {enabled: false}\n"
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// editConfig replaces old with new in the configuration at path.
func editConfig(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

type proc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

func start(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &stderr, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("anima stderr:\n%s", stderr.String())
		}
	})
	return p
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("anima exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("anima did not stop within 15s of SIGTERM")
	}
}

// firstSent waits for the first message anima sends and returns its visible text; none
// before ctx ends fails the test.
func firstSent(ctx context.Context, t *testing.T, tg *telegramtest.Server) string {
	t.Helper()
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatalf("no message sent: %v", err)
	}
	return sent[0].Visible
}

// restartSendsOnce starts anima again on path after a crash and checks that, over a
// second in which a duplicate would come, exactly one message is sent in all, reading
// want; it stops anima and returns the process.
func restartSendsOnce(ctx context.Context, t *testing.T, tg *telegramtest.Server, path, want string) *proc {
	t.Helper()
	p := start(t, "run", "--config", path)
	if got := firstSent(ctx, t, tg); got != want {
		t.Errorf("sent %q after the restart, want %q", got, want)
	}
	time.Sleep(time.Second) // a duplicate would come now
	p.stop(t)
	if n := len(tg.Sent()); n != 1 {
		t.Errorf("%d messages sent in all, want exactly 1", n)
	}
	return p
}

// lastPrompt is the raw body of the latest request the model was sent.
func lastPrompt(ai *openaitest.Server) string {
	reqs := ai.Requests()
	return string(reqs[len(reqs)-1].Raw)
}

// kill ends anima with SIGKILL, as a crash would, and waits for it to go.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.done <- <-p.done // the exit, kept for stop and the cleanup
}

func waitCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	return braintest.Within(t, d)
}

// fakeService starts a fake Telegram and a fake model for the test and writes a
// configuration pointing at them (see writeConfig) in a folder of its own, which the
// store is in too; it returns the fakes and the configuration's path.
func fakeService(t *testing.T) (*telegramtest.Server, *openaitest.Server, string) {
	t.Helper()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	return tg, ai, writeConfig(t, t.TempDir(), tg.URL, ai.URL(), "")
}

// say has user say text and waits (until ctx ends) for anima to have sent n
// messages in all; it returns them.
func say(ctx context.Context, t *testing.T, tg *telegramtest.Server, text string, n int) []telegramtest.Message {
	t.Helper()
	tg.PushText(user, user, text)
	sent, err := tg.WaitSent(ctx, n)
	if err != nil {
		t.Fatalf("after %q: no message %d sent: %v", text, n, err)
	}
	return sent
}

func TestCheckNamesTheBadKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("llm:\n  fast_modle: gpt-4o-mini\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "check", "--config", path).CombinedOutput()
	if err == nil {
		t.Fatalf("check passed a typo'd key:\n%s", out)
	}
	if !strings.Contains(string(out), "fast_modle") {
		t.Errorf("check output does not name the bad key:\n%s", out)
	}
}

func TestRunWithoutTokenFailsFast(t *testing.T) {
	t.Parallel()
	path := offlineConfig(t, "")
	cmd := exec.Command(binary, "run", "--config", path)
	cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN=")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("run without a token exited 0:\n%s", out)
	}
	if !strings.Contains(string(out), "telegram.token") {
		t.Errorf("output does not say the token is missing:\n%s", out)
	}
	t.Logf("run without a token exited in %v", elapsed)
	if elapsed > 5*time.Second { // the target is < 1s; this bound only catches a hang
		t.Errorf("took %v", elapsed)
	}
}

// TestTokenWithNewlineRefused: a token read from a secret file with its trailing newline
// fails `anima check` and `anima run` at once, naming telegram.token, and the token itself
// appears nowhere in the output.
func TestTokenWithNewlineRefused(t *testing.T) {
	t.Parallel()
	path := offlineConfig(t, "")
	for _, cmdName := range []string{"check", "run"} {
		t.Run(cmdName, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(binary, cmdName, "--config", path)
			cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken+"\n")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("%s accepted a token with a trailing newline:\n%s", cmdName, out)
			}
			if !strings.Contains(string(out), "telegram.token: contains whitespace") {
				t.Errorf("output does not say the token contains whitespace:\n%s", out)
			}
			_, secret, _ := strings.Cut(telegramtest.DefaultToken, ":")
			if strings.Contains(string(out), secret) || strings.Contains(string(out), secret[:8]) {
				t.Errorf("output shows the token:\n%s", out)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(binary, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "anima ") {
		t.Fatalf("version: %v %s", err, out)
	}
}

// TestKillMidTurnAnswersOnce kills anima with SIGKILL while the model is answering and
// checks that, after a restart, the update is answered exactly once.
func TestKillMidTurnAnswersOnce(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	ai.Enqueue(openaitest.Reply{Hang: true})

	p := start(t, "run", "--config", path)
	id := tg.PushText(user, user, "are you still there after a crash?")
	ctx := waitCtx(t, 20*time.Second)
	if err := tg.WaitPollOffset(ctx, id+1); err != nil {
		t.Fatalf("update never confirmed: %v", err)
	}
	if err := waitFor(ctx, func() bool { return len(ai.Requests()) > 0 }); err != nil {
		t.Fatal("the model was never asked")
	}
	p.kill(t)
	if n := len(tg.Sent()); n != 0 {
		t.Fatalf("%d messages sent before the crash", n)
	}

	restartSendsOnce(ctx, t, tg, path, "echo: are you still there after a crash?")
}

// TestSIGTERMStopsGracefully checks exit 0 and that state persists across the stop.
func TestSIGTERMStopsGracefully(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	for i, text := range []string{"one", "two"} {
		p := start(t, "run", "--config", path)
		say(waitCtx(t, 20*time.Second), t, tg, text, i+1)
		p.stop(t)
	}
	if !strings.Contains(lastPrompt(ai), "echo: one") {
		t.Error("the second run's prompt lacks the first run's exchange")
	}
}

// TestChatOnConsole pipes lines into `anima chat` and reads the answers.
func TestChatOnConsole(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Echo(req) })
	dir := t.TempDir()
	path := writeConfig(t, dir, "http://127.0.0.1:1", ai.URL(), "")
	cmd := exec.Command(binary, "chat", "--config", path)
	cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN=")
	cmd.Stdin = strings.NewReader("hello console\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "echo: hello console") {
		t.Errorf("chat output = %q", out)
	}
	// Info lines ("anima started", …) mixed into the conversation (issue 36): chat logs
	// warnings and errors only, unless log.level is debug.
	if strings.Contains(stderr.String(), "level=INFO") {
		t.Errorf("chat logs info lines into the conversation:\n%s", stderr.String())
	}
	// The console has its own store beside the service's, which it leaves alone.
	if _, err := os.Stat(filepath.Join(dir, "chat.db")); err != nil {
		t.Errorf("chat store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "anima.db")); !os.IsNotExist(err) {
		t.Errorf("chat touched the service's store: %v", err)
	}
}

// TestHotBackupCLI copies the store with `anima backup` while `anima run` holds it, and
// checks that a second `anima run` on the same store is refused at once.
func TestHotBackupCLI(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	dir := filepath.Dir(path)
	p := start(t, "run", "--config", path)
	say(waitCtx(t, 20*time.Second), t, tg, "keep this safe", 1)

	second := exec.Command(binary, "run", "--config", path)
	second.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
	began := time.Now()
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by another process") {
		t.Errorf("a second instance on the same store: err %v, output:\n%s", err, out)
	}
	t.Logf("second instance refused in %v", time.Since(began).Round(time.Millisecond))

	backup := filepath.Join(dir, "backup.db")
	out, err = exec.Command(binary, "backup", "--config", path, "--out", backup).CombinedOutput()
	if err != nil {
		t.Fatalf("anima backup while running: %v\n%s", err, out)
	}
	fi, err := os.Stat(backup)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, mode %v", err, fi.Mode())
	}
	p.stop(t)

	// The copy is a working store: run anima on it and it remembers the conversation.
	restored := writeConfig(t, t.TempDir(), tg.URL, ai.URL(), "")
	restoredDir := filepath.Dir(restored)
	if err := os.Rename(backup, filepath.Join(restoredDir, "anima.db")); err != nil {
		t.Fatal(err)
	}
	p = start(t, "run", "--config", restored)
	say(waitCtx(t, 20*time.Second), t, tg, "what did I ask?", 2)
	p.stop(t)
	if !strings.Contains(lastPrompt(ai), "keep this safe") {
		t.Error("the restored store lost the conversation")
	}
}

// TestKillAfterSendRepeatsNothing kills anima with SIGKILL just after its second reply
// went out, before any other commit could record the delivery (the store leaves the
// removal of the outbox's last entry to its next commit, the entry's id in the sent log
// meanwhile): after a restart neither reply comes again, as the log's write outlives the
// process in the page cache. The kill waits for the second mark in the log (16 bytes a
// mark): a kill between the send's return and its mark repeats the reply in flight.
func TestKillAfterSendRepeatsNothing(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	dir := filepath.Dir(path)

	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 30*time.Second)
	say(ctx, t, tg, "first words", 1)
	say(ctx, t, tg, "second words", 2)
	for {
		if st, err := os.Stat(filepath.Join(dir, "anima.db.sent")); err == nil && st.Size() >= 32 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the second reply's mark never reached the sent log")
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.kill(t)

	p = start(t, "run", "--config", path)
	// The restart resends what the outbox still holds first thing; give it 10s.
	_, _ = tg.WaitSent(waitCtx(t, 10*time.Second), 3)
	time.Sleep(time.Second) // a further repeat would come now
	p.stop(t)
	count := map[string]int{}
	for _, m := range tg.Sent() {
		count[m.Visible]++
	}
	if count["echo: first words"] != 1 {
		t.Errorf("first reply sent %d times, want 1: %v", count["echo: first words"], count)
	}
	if n := count["echo: second words"]; n != 1 {
		t.Errorf("second reply sent %d times, want 1: %v", n, count)
	}
	if len(ai.Requests()) != 2 {
		t.Errorf("%d model calls, want 2: a repeat comes from the outbox", len(ai.Requests()))
	}
}

// TestKillDuringSendDeliversOnce kills anima with SIGKILL while the reply is on its way to
// Telegram (written to the outbox, request in flight) and checks that after a restart the
// reply arrives exactly once, from the outbox, without asking the model again.
func TestKillDuringSendDeliversOnce(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	slow := openaitest.Answer("this reply survives a crash", "active", 0.9)
	slow.Delay = 300 * time.Millisecond
	ai.Enqueue(slow)

	p := start(t, "run", "--config", path)
	tg.PushText(user, user, "say something durable")
	ctx := waitCtx(t, 30*time.Second)
	if err := waitFor(ctx, func() bool { return len(ai.Requests()) > 0 }); err != nil {
		t.Fatal("the model was never asked")
	}
	tg.SetLatency(time.Minute) // Telegram stops answering: the send hangs
	time.Sleep(time.Second)    // the answer arrives, is committed to the outbox, and is being sent
	p.kill(t)
	tg.SetLatency(0)

	p = restartSendsOnce(ctx, t, tg, path, "this reply survives a crash")
	if n := len(ai.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1: the reply comes from the outbox, not a new turn", n)
	}
	if !strings.Contains(p.stderr.String(), "undelivered=1") {
		t.Errorf("the restart did not resume from the outbox:\n%s", p.stderr.String())
	}
}

// TestRunNamesItsConfiguration: `anima run` given no file picks one by the rule
// (defaultConfig) and never said which (issue 33); the start line names it, absolute,
// though the file was found relative to the working directory.
func TestRunNamesItsConfiguration(t *testing.T) {
	t.Parallel()
	tg, _, path := fakeService(t)
	cmd := exec.Command(binary, "run")
	cmd.Dir = filepath.Dir(path) // ./config.yaml: no $ANIMA_CONFIG, credential nor ./anima.yaml
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANIMA_CONFIG=") && !strings.HasPrefix(kv, "CREDENTIALS_DIRECTORY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
	var stderr braintest.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); done <- <-done })
	say(waitCtx(t, 20*time.Second), t, tg, "which file did you read?", 1) // it runs
	if err := stopWithin(cmd, done, 15*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var started string
	for line := range strings.Lines(stderr.String()) {
		if strings.Contains(line, `msg="anima started"`) {
			started = line
		}
	}
	if !strings.Contains(started, " config="+path+" ") {
		t.Errorf("the start line does not name %s:\n%s", path, stderr.String())
	}
}

// stopWithin sends cmd SIGTERM and waits up to d for its exit, which done (cmd.Wait's
// result, put back for a cleanup that waits again) reports: an error if it did not stop in
// time or exited with an error.
func stopWithin(cmd *exec.Cmd, done chan error, d time.Duration) error {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-done:
		done <- err
		if err != nil {
			return fmt.Errorf("exit after SIGTERM: %w, want 0", err)
		}
		return nil
	case <-time.After(d):
		return fmt.Errorf("still running %s after SIGTERM", d)
	}
}

// placeBinary puts the binary at dir/rel and returns its path: a hard link where it can,
// as a copy written here could still be open for writing in a child another parallel
// test forks at that moment, and exec of it would fail with "text file busy" (ETXTBSY).
func placeBinary(t *testing.T, dir, rel string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(binary, p) == nil {
		return p
	}
	raw, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
