package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	path := writeConfig(t, t.TempDir(), "http://127.0.0.1:1", "http://127.0.0.1:1/v1",
		"mcp:\n  servers:\n    hostile:\n      url: "+hs.URL+"\n      timeout: 10s\n    gone:\n      url: "+secret+"\n      timeout: 10s\n")
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
