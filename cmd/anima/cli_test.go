package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// runCLI runs the command line in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// cliConfig writes a configuration `anima run` would accept, with extra appended, and
// returns its path.
func cliConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	cfg := "telegram:\n  token: " + telegramtest.DefaultToken + "\n  allowed_users: [4242]\n" +
		"llm: {base_url: 'http://127.0.0.1:1/v1'}\nstorage: {path: " + filepath.Join(dir, "data", "anima.db") + "}\n" +
		"metrics: {listen: '127.0.0.1:0'}\n" + extra
	path := filepath.Join(dir, "my.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckUsesTheFileGiven: `anima check FILE` checked ./config.yaml and said "valid"
// (issue 20); the argument, --config and $ANIMA_CONFIG all name the file now.
func TestCheckUsesTheFileGiven(t *testing.T) {
	dir := t.TempDir()
	good := cliConfig(t, dir, "")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("llm: {fast_modle: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // no config.yaml here
	for _, tc := range []struct {
		name string
		env  string
		args []string
		code int
		want string
	}{
		{"argument", "", []string{"check", good}, 0, good + ": valid"},
		{"bad argument", "", []string{"check", bad}, 1, "fast_modle"},
		{"--config", "", []string{"check", "--config", good}, 0, good + ": valid"},
		{"ANIMA_CONFIG", good, []string{"check"}, 0, good + ": valid"},
		{"argument over ANIMA_CONFIG", good, []string{"check", bad}, 1, "fast_modle"},
		{"two files", "", []string{"check", "--config", good, bad}, 2, "two configuration files"},
		{"three arguments", "", []string{"check", good, bad, bad}, 2, "one configuration file"},
		{"no file", "", []string{"check"}, 1, "config.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ANIMA_CONFIG", tc.env)
			t.Setenv("CREDENTIALS_DIRECTORY", "")
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q in:\n%s%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
}

// TestDefaultConfigIsWhatInitWrote: `anima init` on a fresh clone refused to overwrite the
// shipped example config.yaml. It writes anima.yaml (ignored by git: it holds the token),
// and a command given no file reads, in order, $ANIMA_CONFIG, systemd's credential
// $CREDENTIALS_DIRECTORY/anima.yaml (the unit in deploy/systemd passes init's file so),
// ./anima.yaml, ./config.yaml; each existing only when the file does.
func TestDefaultConfigIsWhatInitWrote(t *testing.T) {
	dir := t.TempDir()
	good := cliConfig(t, dir, "")
	work := filepath.Join(dir, "work")      // the working directory
	creds := filepath.Join(dir, "creds")    // a credentials directory holding anima.yaml
	noCreds := filepath.Join(dir, "others") // one holding other credentials only
	for _, d := range []string{work, creds, noCreds} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := func(to string) {
		t.Helper()
		if err := os.Symlink(good, to); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(creds, "anima.yaml"))
	t.Chdir(work)
	t.Setenv("ANIMA_CONFIG", "")
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	if got := initOut(); got != "anima.yaml" {
		t.Errorf("init writes %q, want anima.yaml", got)
	}
	for _, tc := range []struct {
		name, env, credentials string
		initWrote              bool // ./anima.yaml exists
		want                   string
	}{
		{"nothing", "", "", false, "config.yaml"},
		{"init's file", "", "", true, "anima.yaml"},
		{"credential", "", creds, true, filepath.Join(creds, "anima.yaml")},
		{"credentials without anima.yaml", "", noCreds, true, "anima.yaml"},
		{"credentials without anima.yaml, nothing here", "", noCreds, false, "config.yaml"},
		{"ANIMA_CONFIG first", "/elsewhere/x.yaml", creds, true, "/elsewhere/x.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ANIMA_CONFIG", tc.env)
			t.Setenv("CREDENTIALS_DIRECTORY", tc.credentials)
			_ = os.Remove("anima.yaml")
			if tc.initWrote {
				link("anima.yaml")
			}
			if got := defaultConfig(); got != tc.want {
				t.Errorf("defaultConfig() = %q, want %q", got, tc.want)
			}
			// Every configured command reads the file the rule names.
			code, stdout, stderr := runCLI(t, "check")
			if want := tc.want + ": valid"; tc.want != "config.yaml" && tc.env == "" && (code != 0 || !strings.Contains(stdout, want)) {
				t.Errorf("check: exit %d, want 0 and %q:\n%s%s", code, want, stdout, stderr)
			}
			if tc.want == "config.yaml" && (code != 1 || !strings.Contains(stdout+stderr, "config.yaml")) {
				t.Errorf("check: exit %d, want 1 naming config.yaml:\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// TestCheckRefusesWhatRunRefuses: check said "valid" for a file run refuses (issue 20).
func TestCheckRefusesWhatRunRefuses(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"no token", "telegram: {token: '', allowed_users: [1]}\nllm: {base_url: 'http://127.0.0.1:1/v1'}\n", "telegram.token"},
		{"no users", "telegram: {token: " + telegramtest.DefaultToken + "}\nllm: {base_url: 'http://127.0.0.1:1/v1'}\n", "telegram.allowed_users"},
		{"no api key", "telegram: {token: " + telegramtest.DefaultToken + ", allowed_users: [1]}\n", "llm.api_key"},
		{"store under a file", "telegram: {token: " + telegramtest.DefaultToken + ", allowed_users: [1]}\nllm: {base_url: 'http://127.0.0.1:1/v1'}\n" +
			"storage: {path: " + filepath.Join(blocker, "anima.db") + "}\n", "storage.path"},
		{"metrics address not ours", "telegram: {token: " + telegramtest.DefaultToken + ", allowed_users: [1]}\nllm: {base_url: 'http://127.0.0.1:1/v1'}\n" +
			"storage: {path: " + filepath.Join(dir, "a.db") + "}\nmetrics: {listen: '192.0.2.1:9464'}\n", "metrics.listen: cannot listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ANIMA_TELEGRAM_TOKEN", "")
			t.Setenv("ANIMA_LLM_API_KEY", "")
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, "check", path)
			if code != 1 || !strings.Contains(stderr, path+": ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 1 and %q named after the file in stderr:\n%s%s", code, tc.want, stdout, stderr)
			}
		})
	}
}

// TestCheckAcceptsALongStorePath: a store 83 or more characters down the tree stopped
// anima run (its control socket's path was too long for a unix socket address); the
// socket is now reached through the store's directory, so check accepts any length.
func TestCheckAcceptsALongStorePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := cliConfig(t, dir, "")
	long := filepath.Join(dir, strings.Repeat("d", 120), "anima.db")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(strings.Replace(string(raw), filepath.Join(dir, "data", "anima.db"), long, 1))
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "check", path); code != 0 {
		t.Errorf("exit %d, want 0 for a long store path:\n%s%s", code, stdout, stderr)
	}
}

// TestCheckWarnsOfTheExampleUser: config.yaml's allowed_users: [123456789] made anima
// ignore its real user without a word (issue 20).
func TestCheckWarnsOfTheExampleUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := cliConfig(t, dir, "")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(data, []byte("[4242]"), []byte("[123456789]"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "check", path)
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "123456789") {
		t.Errorf("exit %d, want 0 and a warning naming 123456789:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "check", cliConfig(t, t.TempDir(), ""))
	if code != 0 || strings.Contains(stderr, "123456789") {
		t.Errorf("exit %d, want 0 and no warning:\n%s", code, stderr)
	}
}

// TestCommandFlags: `anima check --help` listed every command's flags and exited 2, and
// flags that do not apply were accepted (issue 20).
func TestCommandFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		want     string
		dontWant string
	}{
		{"check help", []string{"check", "--help"}, 0, "-config", "-days"},
		{"sim help", []string{"sim", "-h"}, 0, "-scenario", "-timeout"},
		{"chat help", []string{"chat", "--help"}, 0, "-store", "-out"},
		{"check --days", []string{"check", "--days", "3"}, 2, "-days", ""},
		{"run --out", []string{"run", "--out", "x"}, 2, "-out", ""},
		{"backup --timeout", []string{"backup", "--timeout", "1s"}, 2, "-timeout", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			out := stdout
			if tc.code != 0 {
				out = stderr
			}
			if code != tc.code || !strings.Contains(out, tc.want) || (tc.dontWant != "" && strings.Contains(out, tc.dontWant)) {
				t.Errorf("exit %d, want %d with %q and without %q in:\n%s", code, tc.code, tc.want, tc.dontWant, out)
			}
		})
	}
}

func TestChatStore(t *testing.T) {
	t.Parallel()
	if got := chatStore("/data/anima.db", ""); got != "/data/chat.db" {
		t.Errorf("chatStore default = %q, want /data/chat.db", got)
	}
	if got := chatStore("/data/anima.db", "/tmp/x.db"); got != "/tmp/x.db" {
		t.Errorf("chatStore --store = %q", got)
	}
}

// TestRunWithRefusedTokenExits: a 401 from getMe at start retried for ever (issue 20); now
// `anima run` exits 1 at once, naming telegram.token. It also warns first that
// allowed_users holds only config.yaml's example id.
func TestRunWithRefusedTokenExits(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t, telegramtest.WithToken("999:"+strings.Repeat("y", 35)))
	dir := t.TempDir()
	path := writeConfigWith(t, dir, testConfig{tgURL: tg.URL, aiURL: "http://127.0.0.1:1/v1", users: []int64{123456789}})
	cmd := exec.Command(binary, "run", path)
	cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
	done := make(chan struct{})
	var out []byte
	var err error
	began := time.Now()
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		t.Logf("run with a refused token exited after %v", time.Since(began).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("run still going with a refused token:\n%s", out)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("run exited with %v, want exit status 1", err)
	}
	if !strings.Contains(string(out), "telegram.token was refused") {
		t.Errorf("output does not name telegram.token:\n%s", out)
	}
	if !strings.Contains(string(out), "level=WARN msg=\"telegram.allowed_users still holds the example id 123456789") {
		t.Errorf("run does not warn of the example user id:\n%s", out)
	}
}
