package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/braintest"
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
	args := []string{"init", "--yes", "--api-url", tg.URL,
		"--llm-base-url", ai.URL(), "--model", "qwen2.5:7b", "--user-id", "4242", "--out", path}
	env := append(os.Environ(), "ANIMA_CONFIG=", "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken, "ANIMA_LLM_API_KEY=")
	initCmd := func() *exec.Cmd {
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		return cmd
	}
	out, err := initCmd().CombinedOutput()
	if err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\n    "+binary+" run "+path+"\n") {
		t.Errorf("init does not print the command to start, %s run %s:\n%s", binary, path, out)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config %v, want mode 0600 (%v)", st, err)
	}
	if out, err := exec.Command(binary, "check", path).CombinedOutput(); err != nil {
		t.Errorf("check of the written config: %v\n%s", err, out)
	}
	out, err = initCmd().CombinedOutput()
	if err != nil || !strings.Contains(string(out), "already written and valid") {
		t.Errorf("second init: %v, want exit 0 and the file left alone:\n%s", err, out)
	}
	if err := os.WriteFile(path, []byte("telegram: {token: ''}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = initCmd().CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--force") {
		t.Errorf("init over a file that would not run: %v, want a refusal naming --force:\n%s", err, out)
	}
}

// TestInitPrintsACommandThatStarts: after `go run ./cmd/anima init` init printed
// `anima run anima.yaml`, and there is no anima on the PATH. It prints the command the
// way init itself was started, leaving out the file when `run` finds it without; the
// printed line, run by a shell in the same directory, starts anima on init's file.
func TestInitPrintsACommandThatStarts(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	place := placeBinary
	cacheDir := "go-cache/3f/" + strings.Repeat("3f", 32) + "-d/anima"
	for _, tc := range []struct {
		name   string
		exe    string // where the binary is, under the test's folder
		arg0   string // how it is invoked: "PATH" for by name, "" for its path
		repo   bool   // the working directory holds cmd/anima (a clone's root)
		out    string // --out, "" for the default
		config string // $ANIMA_CONFIG
		want   string // the line printed; BIN is the binary's path, DIR the folder
		runs   bool   // the printed line can be run here (go run cannot)
	}{
		{"binary by its path", "bin/anima", "", false, "", "", "BIN run", true},
		{"binary, another file", "bin/anima", "", false, "DIR/my anima.yaml", "", "BIN run 'DIR/my anima.yaml'", true},
		{"binary on the PATH", "bin/anima", "PATH", false, "", "", "anima run", true},
		{"ANIMA_CONFIG names the file", "bin/anima", "PATH", false, "", "DIR/env.yaml", "anima run DIR/env.yaml", true},
		{"go run in a clone", "tmp/go-build123/b001/exe/anima", "", true, "", "", "go run ./cmd/anima run", false},
		{"go run, cached build", cacheDir, "", true, "x.yaml", "", "go run ./cmd/anima run x.yaml", false},
		{"go run outside the root", cacheDir, "", false, "", "", "go run github.com/anima-bot/anima/cmd/anima run", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := telegramtest.New(t)
			dir := t.TempDir()
			work := filepath.Join(dir, "work")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.repo {
				if err := os.MkdirAll(filepath.Join(work, "cmd", "anima"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			exe := place(t, dir, tc.exe)
			arg0, path := exe, os.Getenv("PATH")
			if tc.arg0 == "PATH" {
				arg0, path = "anima", filepath.Dir(exe)+string(os.PathListSeparator)+path
			}
			expand := func(s string) string {
				return strings.NewReplacer("BIN", exe, "DIR", dir).Replace(s)
			}
			args := []string{"init", "--yes", "--api-url", tg.URL,
				"--llm-base-url", ai.URL(), "--model", "qwen2.5:7b", "--user-id", "4242"}
			if tc.out != "" {
				args = append(args, "--out", expand(tc.out))
			}
			env := append(os.Environ(), "PATH="+path, "ANIMA_CONFIG="+expand(tc.config), "CREDENTIALS_DIRECTORY=",
				"ANIMA_STORAGE_PATH=", "ANIMA_METRICS_LISTEN=127.0.0.1:0")
			cmd := exec.Command(exe, args...)
			cmd.Args[0] = arg0
			// The token from the environment of init alone, not of the command it prints.
			cmd.Dir, cmd.Env = work, append(slices.Clip(env), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			want := expand(tc.want)
			if !strings.Contains(string(out), "\n    "+want+"\n") {
				t.Fatalf("init does not print %q:\n%s", want, out)
			}
			if !tc.runs {
				return
			}
			run := exec.Command("sh", "-c", "exec "+want)
			run.Dir, run.Env = work, env
			var stderr strings.Builder
			run.Stderr = &stderr
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- run.Wait() }()
			defer func() {
				_ = run.Process.Kill()
				<-done
			}()
			// The token, API URL and user are in init's file alone: a poll at this fake and
			// an answer to the owner show that the line started anima on that file.
			tg.PushText(4242, 4242, "hello")
			ctx := waitCtx(t, 20*time.Second)
			if _, err := tg.WaitCalls(ctx, "sendMessage", 1); err != nil {
				t.Fatalf("%q did not start anima on init's file: %v\n%s", want, err, stderr.String())
			}
		})
	}
}

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
	init := exec.Command(binary, "init", "--yes", "--api-url", tg.URL,
		"--llm-base-url", ai.URL(), "--model", "qwen2.5:7b", "--user-id", "4242", "--out", installed)
	init.Env = append(os.Environ(), "ANIMA_CONFIG=", "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
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
	if err := stopWithin(cmd, done, stopIn); err != nil {
		t.Errorf("%v (TimeoutStopSec %s)", err, stopIn)
	}
}

// TestInitSecretsNotInArgv: `init --token` and `--llm-key` sat in the command line, which
// every user of the machine reads with ps, for the whole wait for the owner's code
// (issue 33). The token and key come from $ANIMA_TELEGRAM_TOKEN and $ANIMA_LLM_API_KEY
// (init says it took them from there) or from standard input; the flags still work, with
// a warning that names ps and the variable; --yes with neither names the variable.
func TestInitSecretsNotInArgv(t *testing.T) {
	const key = "sk-secret-key"
	for _, tc := range []struct {
		name       string
		env        bool     // token and key in the environment
		args       []string // beyond the endpoint, model, user and file
		stdin      string
		code       int
		stdout     []string
		stderr     []string
		notStderr  []string
		notStdout  []string
		wantSecret bool // the config holds the token and key
	}{
		{name: "environment", env: true, args: []string{"--yes"}, wantSecret: true,
			stdout:    []string{"Taking the bot token from $ANIMA_TELEGRAM_TOKEN.", "Taking the API key from $ANIMA_LLM_API_KEY."},
			notStderr: []string{"warning"}},
		{name: "command line", args: []string{"--yes", "--token", telegramtest.DefaultToken, "--llm-key", key}, wantSecret: true,
			stderr: []string{
				"anima init: warning: --token puts the bot token in the command line, where every user of this machine can read it (ps)",
				"set ANIMA_TELEGRAM_TOKEN instead, or leave --token out to be asked for it",
				"anima init: warning: --llm-key puts the API key in the command line", "set ANIMA_LLM_API_KEY instead"},
			notStdout: []string{"Taking"}},
		{name: "standard input", args: []string{"--timezone", "UTC"}, stdin: telegramtest.DefaultToken + "\n" + key + "\n", wantSecret: true,
			notStderr: []string{"warning"}, notStdout: []string{"Taking"}},
		{name: "--yes with none", args: []string{"--yes"}, code: 1,
			stderr: []string{"the bot token is required with --yes: set ANIMA_TELEGRAM_TOKEN (--token works too, but puts it in the command line, " +
				"which every user of this machine can read with ps)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := telegramtest.New(t)
			ai := openaitest.New(t)
			ai.SetModels("qwen2.5:7b")
			ai.SetKey(key) // refuses a request without it, so init asks for it although the endpoint is on this machine
			token, k := "", ""
			if tc.env {
				token, k = telegramtest.DefaultToken, key
			}
			t.Setenv("ANIMA_TELEGRAM_TOKEN", token)
			t.Setenv("ANIMA_LLM_API_KEY", k)
			path := filepath.Join(t.TempDir(), "anima.yaml")
			args := append([]string{"init", "--api-url", tg.URL, "--llm-base-url", ai.URL(), "--model", "qwen2.5:7b",
				"--user-id", "4242", "--out", path}, tc.args...)
			var stdout, stderr strings.Builder
			code := run(args, strings.NewReader(tc.stdin), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, stdout.String(), stderr.String())
			}
			check := func(stream, got string, want, not []string) {
				braintest.CheckText(t, stream, got, want, not)
				if strings.Contains(got, telegramtest.DefaultToken) || strings.Contains(got, key) {
					t.Errorf("%s shows a secret:\n%s", stream, got)
				}
			}
			check("stdout", stdout.String(), tc.stdout, tc.notStdout)
			check("stderr", stderr.String(), tc.stderr, tc.notStderr)
			if !tc.wantSecret {
				return
			}
			cfg, err := config.Check(path, true)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Telegram.Token.Reveal() != telegramtest.DefaultToken || cfg.LLM.APIKey.Reveal() != key {
				t.Errorf("the config does not hold the token and key given")
			}
		})
	}
}
