package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// unitFile is the systemd unit docs/deploy.md installs.
const unitFile = "../../deploy/systemd/anima.service"

// serviceSection returns the values of each key of the unit's [Service] section, in order.
// It reads what the shipped unit uses: no line continuations, no quoting.
func serviceSection(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.HasSuffix(line, `\`) || strings.ContainsAny(v, `"'`) {
				t.Fatalf("%s: %q: this test reads key=value lines without quotes or continuations", path, line)
			}
			keys[k] = append(keys[k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestSystemdUnitRunsInitsFile runs the ExecStart line of deploy/systemd/anima.service the
// way systemd would: the file `anima init` wrote is installed root's and 0600 at the
// LoadCredential= source, copied (as systemd does, mode 0400) into a credentials
// directory named by $CREDENTIALS_DIRECTORY, and the command runs with only the unit's
// Environment= (the state directory moved under the test's folder), in its
// WorkingDirectory=, with none of the shell's variables. anima must answer the owner from
// that copy alone, keep its store where the unit says, and stop within TimeoutStopSec on
// SIGTERM.
func TestSystemdUnitRunsInitsFile(t *testing.T) {
	t.Parallel()
	unit := serviceSection(t, unitFile)
	one := func(key string) string {
		t.Helper()
		if len(unit[key]) != 1 {
			t.Fatalf("%s: want one %s=, have %q", unitFile, key, unit[key])
		}
		return unit[key][0]
	}
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	root := t.TempDir()

	// The install lines: init's file at the credential's source.
	id, source, ok := strings.Cut(one("LoadCredential"), ":")
	if !ok || id != credentialName {
		t.Fatalf("LoadCredential=%s: want %s:SOURCE, the name anima looks for in $CREDENTIALS_DIRECTORY", one("LoadCredential"), credentialName)
	}
	installed := filepath.Join(root, source)
	init := exec.Command(binary, "init", "--yes", "--token", telegramtest.DefaultToken, "--api-url", tg.URL,
		"--llm-base-url", ai.URL(), "--model", "qwen2.5:7b", "--user-id", "4242", "--out", installed)
	init.Env = append(os.Environ(), "ANIMA_CONFIG=")
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	// systemd: the credential copied, mode 0400, into a directory of the service's own.
	raw, err := os.ReadFile(installed)
	if err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(root, "run", "credentials", "anima.service")
	if err := os.MkdirAll(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(creds, id), raw, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(installed); err != nil { // the service never reads the source
		t.Fatal(err)
	}

	// The state directory, /var/lib/<StateDirectory=>, under the test's folder.
	state := "/var/lib/" + one("StateDirectory")
	moved := strings.NewReplacer(state, filepath.Join(root, state))
	if err := os.MkdirAll(filepath.Join(root, state), 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "CREDENTIALS_DIRECTORY=" + creds, "STATE_DIRECTORY=" + filepath.Join(root, state),
		// The one departure from the unit: init's default 127.0.0.1:9464 may be taken on
		// this machine.
		"ANIMA_METRICS_LISTEN=127.0.0.1:0"}
	for _, e := range unit["Environment"] {
		for _, kv := range strings.Fields(e) {
			env = append(env, moved.Replace(kv))
		}
	}
	args := strings.Fields(one("ExecStart"))
	if args[0] != "/usr/local/bin/anima" {
		t.Fatalf("ExecStart runs %s, where the install lines put anima at /usr/local/bin/anima", args[0])
	}
	cmd := exec.Command(binary, args[1:]...)
	cmd.Env, cmd.Dir = env, moved.Replace(one("WorkingDirectory"))
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The wait for the answer ends early if anima exits.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var exited atomic.Bool
	go func() {
		err := cmd.Wait()
		exited.Store(true)
		cancel()
		done <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s:\n%s", one("ExecStart"), stderr.String())
		}
	})

	tg.PushText(4242, 4242, "hello from the service")
	if _, err := tg.WaitCalls(ctx, "sendMessage", 1); err != nil {
		t.Fatalf("the unit's command did not answer the owner from the credential (exited: %t): %v", exited.Load(), err)
	}
	store := moved.Replace(strings.TrimPrefix(unit["Environment"][0], "ANIMA_STORAGE_PATH="))
	if _, err := os.Stat(store); err != nil || !strings.HasPrefix(unit["Environment"][0], "ANIMA_STORAGE_PATH=") {
		t.Errorf("the store is not where the unit's Environment=%s puts it: %v", unit["Environment"][0], err)
	}
	stopIn, err := time.ParseDuration(one("TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("exit after SIGTERM: %v, want 0", err)
		}
	case <-time.After(stopIn):
		t.Errorf("still running %s after SIGTERM (TimeoutStopSec)", stopIn)
	}
}
