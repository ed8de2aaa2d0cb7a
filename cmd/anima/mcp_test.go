package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

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
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sent[0].Visible != "It says ping." {
		t.Errorf("reply = %q", sent[0].Visible)
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
