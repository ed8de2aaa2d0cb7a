package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
	"github.com/anima-bot/anima/storage"
)

// runCLI runs the command line in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// cliConfig writes a configuration `anima run` would accept, with extra appended, and
// returns its path. Its Telegram and model endpoint are fakes that accept its token and
// list its models, so `anima check` passes it without --offline.
func cliConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("gpt-4o-mini", "gpt-4o")
	cfg := "telegram:\n  token: " + telegramtest.DefaultToken + "\n  api_url: " + tg.URL + "\n  allowed_users: [4242]\n" +
		"llm: {base_url: '" + ai.URL() + "'}\nstorage: {path: " + filepath.Join(dir, "data", "anima.db") + "}\n" +
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
		{"store in a file system nobody may write", "telegram: {token: " + telegramtest.DefaultToken + ", allowed_users: [1]}\nllm: {base_url: 'http://127.0.0.1:1/v1'}\n" +
			"storage: {path: /sys/anima/anima.db}\n", "storage.path: directory /sys/anima cannot be created"},
		{"metrics address not ours", "telegram: {token: " + telegramtest.DefaultToken + ", allowed_users: [1]}\nllm: {base_url: 'http://127.0.0.1:1/v1'}\n" +
			"storage: {path: " + filepath.Join(dir, "a.db") + "}\nmetrics: {listen: '192.0.2.1:9464'}\n", "metrics.listen: cannot listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.yaml, "/sys/") {
				if _, err := os.Stat("/sys/kernel"); err != nil {
					t.Skip("no sysfs here")
				}
			}
			t.Setenv("ANIMA_TELEGRAM_TOKEN", "")
			t.Setenv("ANIMA_LLM_API_KEY", "")
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, "check", "--offline", path)
			if code != 1 || !strings.Contains(stderr, path+": ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 1 and %q named after the file in stderr:\n%s%s", code, tc.want, stdout, stderr)
			}
			if !strings.HasPrefix(tc.want, "telegram.") && !strings.HasPrefix(tc.want, "llm.") {
				return // the rest fail in bot.Run, whose error the CLI tests of run cover
			}
			// run refuses the file too, naming it (issue 26: its errors named no file).
			code, stdout, stderr = runCLI(t, "run", path)
			if code != 1 || !strings.Contains(stderr, path+": ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("run: exit %d, want 1 and %q named after the file in stderr:\n%s%s", code, tc.want, stdout, stderr)
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
	editConfig(t, path, filepath.Join(dir, "data", "anima.db"), long)
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
	editConfig(t, path, "[4242]", "[123456789]")
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
		{"chat help: --metrics takes no value", []string{"chat", "--help"}, 0, "  -metrics\n", "-metrics anima run"},
		{"check --days", []string{"check", "--days", "3"}, 2, "-days", ""},
		{"version help", []string{"version", "--help"}, 0, "Usage: anima version", "anima dev"},
		{"help says how FILE is found", []string{"--help"}, 0, "and ./anima.yaml (what `anima init` writes), else ./config.yaml", ""},
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
	if !strings.Contains(string(out), "config="+path) {
		t.Errorf("run's error does not name the file %s:\n%s", path, out)
	}
	if !strings.Contains(string(out), "level=WARN msg=\"telegram.allowed_users still holds the example id 123456789") {
		t.Errorf("run does not warn of the example user id:\n%s", out)
	}
	// A failed start left a new empty store behind, which the next command read as the
	// service's (issue 36).
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("after the failed start %s holds %q, want only config.yaml", dir, names)
	}
}

// TestChatBesideRun: `anima chat` failed with "metrics.listen 127.0.0.1:9464: address
// already in use" while `anima run` held the address (issue 26), though the two are
// meant to run side by side. chat serves no metrics unless --metrics asks.
func TestChatBesideRun(t *testing.T) {
	ai := openaitest.New(t)
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Echo(req) })
	held, err := net.Listen("tcp", "127.0.0.1:0") // the running service's metrics server
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	dir := t.TempDir()
	path := writeConfigWith(t, dir, testConfig{tgURL: "http://127.0.0.1:1", aiURL: ai.URL(), metrics: held.Addr().String()})
	t.Setenv("ANIMA_TELEGRAM_TOKEN", "")

	var stdout, stderr bytes.Buffer
	code := run([]string{"chat", path}, strings.NewReader("hello console\n"), &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "echo: hello console") {
		t.Errorf("chat beside a held metrics address: exit %d, want 0 and an answer:\n%s%s", code, stdout.String(), stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	code = run([]string{"chat", "--metrics", path}, strings.NewReader("hello console\n"), &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "address already in use") {
		t.Errorf("chat --metrics on a held address: exit %d, want non-zero naming the address in use:\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestCheckAsksTelegramAndTheModel: `anima check` said "valid" for a token Telegram
// answers 401, which `anima run` refuses at once, and stopped at the first problem
// (issue 26). It asks getMe and the model endpoint as init does (--offline skips both)
// and lists every problem.
func TestCheckAsksTelegramAndTheModel(t *testing.T) {
	tg := telegramtest.New(t)
	refusing := telegramtest.New(t, telegramtest.WithToken("999:"+strings.Repeat("y", 35)))
	ai := openaitest.New(t)
	ai.SetModels("gpt-4o-mini", "gpt-4o")
	keyed := openaitest.New(t)
	keyed.SetModels("gpt-4o-mini", "gpt-4o")
	keyed.SetKey("the-right-key")
	unlisted := openaitest.New(t)
	unlisted.SetModels("qwen2.5:7b")
	nolist := openaitest.New(t) // no GET /models: a one-token request per model
	nolist.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Reply{Content: "OK"} })
	config := func(tgURL, aiURL, extra string) string {
		dir := t.TempDir()
		yaml := "telegram:\n  token: " + telegramtest.DefaultToken + "\n  api_url: " + tgURL + "\n  allowed_users: [4242]\n" +
			"llm: {base_url: '" + aiURL + "', api_key: a-wrong-key}\nstorage: {path: " + filepath.Join(dir, "anima.db") + "}\n" +
			"metrics: {listen: '127.0.0.1:0'}\n" + extra
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		want     []string
		dontWant []string
	}{
		{"token, key and models work", []string{config(tg.URL, ai.URL(), "")}, 0,
			[]string{"valid (asked Telegram and the model endpoint)"}, nil},
		{"a model answers a one-token request", []string{config(tg.URL, nolist.URL(), "")}, 0, []string{"valid"}, nil},
		{"token refused", []string{config(refusing.URL, ai.URL(), "")}, 1,
			[]string{"telegram.token: getMe: Telegram refused this token"}, []string{"valid", "TEST-fake-token"}},
		{"offline does not ask", []string{"--offline", config(refusing.URL, keyed.URL(), "")}, 0,
			[]string{"valid (offline"}, nil},
		{"key refused", []string{config(tg.URL, keyed.URL(), "")}, 1,
			[]string{"llm.api_key: the endpoint refused the key (HTTP 401)"}, []string{"a-wrong-key"}},
		{"models not listed", []string{config(tg.URL, unlisted.URL(), "")}, 1,
			[]string{`llm.fast_model: the endpoint does not list the model "gpt-4o-mini"`, `llm.smart_model: the endpoint does not list the model "gpt-4o"`}, nil},
		{"every problem at once", []string{config(refusing.URL, unlisted.URL(), "user: {timezone: Mars/Olympus}\nbrain: {tick: 1h}\n")}, 1,
			[]string{"telegram.token: getMe", "llm.fast_model", "llm.smart_model", "user.timezone", "brain.tick"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ANIMA_TELEGRAM_TOKEN", "")
			t.Setenv("ANIMA_LLM_API_KEY", "")
			code, stdout, stderr := runCLI(t, append([]string{"check"}, tc.args...)...)
			out := stdout + stderr
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// everythingVersion is the MCP project's conformance server the end-to-end tests run.
const everythingVersion = "2026.8.31"

// everything returns the entry script of @modelcontextprotocol/server-everything,
// installing it with npm into the user's cache directory on first use (later runs reuse
// it). The test is skipped when node or npm is missing or the install fails (offline).
func everything(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed; the MCP end-to-end tests run @modelcontextprotocol/server-everything with node", tool)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "anima-test", "mcp-everything-"+everythingVersion)
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err == nil {
		return script
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Skipf("skipped: no cache directory for the MCP server: %v", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Skipf("skipped: no cache directory for the MCP server: %v", err)
	}
	defer os.RemoveAll(tmp)
	// Offline (a CI machine that reaches only the Go module proxy), npm would retry each
	// fetch for minutes: one retry and a 30 s fetch timeout make it give up within about a
	// minute, and the test is skipped.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error",
		"--fetch-retries=1", "--fetch-timeout=30000", "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=5000",
		"@modelcontextprotocol/server-everything@"+everythingVersion).CombinedOutput()
	if err != nil {
		t.Skipf("skipped: npm install @modelcontextprotocol/server-everything@%s failed (offline?): %v\n%s", everythingVersion, err, out)
	}
	// Another run may have finished first; either copy will do.
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(script); serr != nil {
			t.Fatalf("install the MCP server into %s: %v", dir, err)
		}
	}
	return script
}

func everythingConfig(script string) string {
	return fmt.Sprintf("mcp:\n  servers:\n    everything:\n      command: [node, %q, stdio]\n      profiles: [chat]\n      timeout: 20s\n", script)
}

// TestMCPListEverything: `anima mcp list` starts the conformance server, prints the
// tools anima would offer from it, and exits.
func TestMCPListEverything(t *testing.T) {
	t.Parallel()
	script := everything(t)
	path := offlineConfig(t, everythingConfig(script))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "mcp", "list", "--config", path).CombinedOutput()
	if err != nil {
		t.Fatalf("anima mcp list: %v\n%s", err, out)
	}
	for _, want := range []string{"everything: ", "everything_echo ", "everything_get-sum ", "everything_get-tiny-image "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the listing lacks %q:\n%s", want, out)
		}
	}
}

// TestMCPRunEverything: with the conformance server configured, `anima run` offers its
// tools to the model with schemas the API accepts in strict mode, runs the call the
// model makes, and hands the result back fenced as untrusted data.
func TestMCPRunEverything(t *testing.T) {
	t.Parallel()
	script := everything(t)
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	a := startLogged(t, tg.URL, ai.URL(), telegramtest.DefaultToken, everythingConfig(script))
	ctx := waitCtx(t, 30*time.Second)
	waitUntil(t, ctx, "the MCP server up", func() bool {
		return metric(t, a.metrics, `anima_mcp_server_up{server="everything"}`) == 1
	})
	ai.Enqueue(openaitest.Tool("everything_echo", `{"message":"ping from anima"}`),
		openaitest.Answer("It says ping.", "open", 0.9))
	tg.PushText(user, user, "what does the echo say?")
	if got := firstSent(ctx, t, tg); got != "It says ping." {
		t.Errorf("reply = %q", got)
	}
	reqs := ai.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	first, last := string(reqs[0].Raw), string(reqs[len(reqs)-1].Raw)
	if !strings.Contains(first, `"name":"everything_echo"`) {
		t.Errorf("the first request does not offer everything_echo:\n%s", first)
	}
	if !strings.Contains(last, `\u003cuntrusted\u003e\nEcho: ping from anima`) && !strings.Contains(last, "<untrusted>\\nEcho: ping from anima") {
		t.Errorf("the tool's result is not fenced in the second request:\n%s", last)
	}
	if v := metric(t, a.metrics, `anima_mcp_calls_total{outcome="ok",server="everything",tool="echo"}`); v != 1 {
		t.Errorf("anima_mcp_calls_total{ok} = %v, want 1", v)
	}
	if v := ai.Violations(); len(v) > 0 {
		t.Errorf("requests broke the API's rules (strict schemas?): %v", v)
	}
	a.stop()
}

// TestMCPListHostileServer: `anima mcp list` of a server whose tool names and
// descriptions carry terminal escapes prints the escapes visibly; of one that cannot be
// reached at a URL with a password and an API key, it prints the error without either.
func TestMCPListHostileServer(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	none := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	s.AddTool(&mcp.Tool{Name: "title", Description: "hello \x1b]0;PWNED\a\x1b[2J\rfake line",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, none)
	s.AddTool(&mcp.Tool{Name: "red\x1b[31m\u009b2K", Description: "x",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":{"type":"string"}}`)}, none)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // its port refuses connections now
	secret := strings.Replace(gone.URL, "http://", "http://user:SECRETU@", 1) + "/mcp?api_key=SECRETQ"
	path := offlineConfig(t, "mcp:\n  servers:\n    hostile:\n      url: "+hs.URL+"\n      timeout: 10s\n    gone:\n      url: "+secret+"\n      timeout: 10s\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "mcp", "list", "--config", path).CombinedOutput()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("anima mcp list exited with %v, want exit status 1 (a server not available)\n%s", err, out)
	}
	text := string(out)
	if strings.ContainsAny(text, "\x1b\a\r\u009b") {
		t.Errorf("the listing has raw control characters:\n%q", text)
	}
	for _, want := range []string{`hostile_title  hello \x1b]0;PWNED\a\x1b[2J\rfake line`, `- red\x1b[31m\u009b2K (not offered:`,
		`gone: not available: `, `http://***@127.0.0.1:`, `/mcp?***`} {
		if !strings.Contains(text, want) {
			t.Errorf("the listing lacks %s:\n%s", want, text)
		}
	}
	for _, secret := range []string{"SECRETU", "SECRETQ"} {
		if strings.Contains(text, secret) {
			t.Errorf("the listing shows %s:\n%s", secret, text)
		}
	}
}

// TestCheckReportsEveryProblemOnce: with alowed_users, a bad zone and port 99999 in one
// file, `anima check` reported the unknown key and a false "llm.base_url: the endpoint
// cannot be reached at :" (the key is set), and the zone and port only once the typo was
// fixed (issue 36). Now it reports the three, each once, and asks the endpoint written.
func TestCheckReportsEveryProblemOnce(t *testing.T) {
	t.Setenv("ANIMA_TELEGRAM_TOKEN", "")
	t.Setenv("ANIMA_LLM_API_KEY", "")
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("gpt-4o-mini", "gpt-4o")
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	yaml := "telegram:\n  token: " + telegramtest.DefaultToken + "\n  api_url: " + tg.URL + "\n  alowed_users: [4242]\n" +
		"llm: {base_url: '" + ai.URL() + "', api_key: k}\nstorage: {path: " + filepath.Join(dir, "anima.db") + "}\n" +
		"user: {timezone: Europe/Berln}\nmetrics: {listen: '127.0.0.1:99999'}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "check", path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"telegram.alowed_users: unknown key", "user.timezone: unknown time zone", "metrics.listen: must be host:port"} {
		if strings.Count(stderr, want) != 1 {
			t.Errorf("output says %q %d times, want once:\n%s", want, strings.Count(stderr, want), stdout+stderr)
		}
	}
	for _, dont := range []string{"llm.base_url", "telegram.allowed_users", "telegram.token", "valid"} {
		if strings.Contains(stdout+stderr, dont) {
			t.Errorf("output says %q, a problem the file does not have:\n%s", dont, stdout+stderr)
		}
	}
}

// TestStorePathBesideTheFile: a relative storage.path followed the working directory, so
// `anima dead list h.yaml` from another folder looked for (and a failed run created) a new
// store there (issue 36). It is taken relative to the file's folder; a store the old
// meaning finds, and the new does not, is still used, with a warning saying both paths.
func TestStorePathBesideTheFile(t *testing.T) {
	home, elsewhere := t.TempDir(), t.TempDir()
	cfg := "telegram: {token: '" + telegramtest.DefaultToken + "', allowed_users: [4242]}\nllm: {base_url: 'http://127.0.0.1:1/v1', api_key: k}\n" +
		"storage: {path: data/anima.db}\nmetrics: {listen: ''}\n"
	path := filepath.Join(home, "h.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := func(dir string) (int, string) {
		cmd := exec.Command(binary, "dead", "list", path)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "ANIMA_CONFIG=", "ANIMA_STORAGE_PATH=")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	// The store of a first conversation, beside the file: found from any folder.
	st, err := storage.Open(filepath.Join(home, "data", "anima.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out := dead(elsewhere); code != 0 || !strings.Contains(out, "no dead letters") {
		t.Errorf("dead list from another folder: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "data")); err == nil {
		t.Errorf("dead list from another folder made %s/data", elsewhere)
	}
	// A store where the old meaning put it (relative to the working directory) is still
	// used, and the warning names both paths and what to do.
	if err := os.Rename(filepath.Join(home, "data"), filepath.Join(elsewhere, "data")); err != nil {
		t.Fatal(err)
	}
	code, out := dead(elsewhere)
	old, beside := filepath.Join("data", "anima.db"), filepath.Join(home, "data", "anima.db")
	if code != 0 || !strings.Contains(out, "no dead letters") || !strings.Contains(out, "warning") ||
		!strings.Contains(out, "using "+old) || !strings.Contains(out, "move it to "+beside) {
		t.Errorf("dead list with the store where the working directory put it: exit %d, want 0 and a warning naming %s and %s:\n%s", code, old, beside, out)
	}
}
