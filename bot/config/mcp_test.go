package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConfigMCP: mcp.servers decodes each named server strictly, with ${VAR} expanded
// in env and headers (never in their keys), and enabled absent meaning on.
func TestConfigMCP(t *testing.T) {
	t.Parallel()
	yaml := `
mcp:
  servers:
    weather:
      command: ["npx", "-y", "some-mcp-server"]
      env: {API_KEY: "${WEATHER_KEY}"}
      profiles: [chat, proactive]
      timeout: 10s
    search:
      url: https://search.example.com/mcp
      headers: {Authorization: "Bearer ${SEARCH_KEY}"}
      tools: [find]
      enabled: false
`
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"WEATHER_KEY": "w1", "SEARCH_KEY": "s1"}[k]
		return v, ok
	}
	cfg, err := parse([]byte(yaml), env)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	w, s := cfg.MCP.Servers["weather"], cfg.MCP.Servers["search"]
	if diff := cmp.Diff(map[string]Secret{"API_KEY": "w1"}, w.Env); diff != "" {
		t.Errorf("weather env (-want +got):\n%s", diff)
	}
	if w.Timeout.Std() != 10*time.Second || !w.On() || len(w.Profiles) != 2 {
		t.Errorf("weather = %+v", w)
	}
	if s.Headers["Authorization"].Reveal() != "Bearer s1" || s.On() || s.URL != "https://search.example.com/mcp" {
		t.Errorf("search = %+v", s)
	}
	if out := cfg.Redacted(); strings.Contains(out, "w1") || strings.Contains(out, "Bearer s1") {
		t.Errorf("Redacted shows an MCP server's secret:\n%s", out)
	}
}

// TestConfigMCPErrors: each mistake in mcp.servers is named by its full key.
func TestConfigMCPErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown key", "mcp:\n  servers:\n    w:\n      comand: [x]\n", `mcp.servers.w.comand: unknown key`},
		{"neither", "mcp:\n  servers:\n    w:\n      timeout: 1s\n", `mcp.servers.w: set command`},
		{"both", "mcp:\n  servers:\n    w:\n      command: [x]\n      url: http://h/mcp\n", `mcp.servers.w: set either command`},
		{"bad name", "mcp:\n  servers:\n    my_srv:\n      command: [x]\n", `mcp.servers.my_srv: a server's name`},
		{"bad profile", "mcp:\n  servers:\n    w:\n      command: [x]\n      profiles: [chat, sleep]\n", `mcp.servers.w.profiles: must be one of chat, proactive, dream`},
		{"bad url", "mcp:\n  servers:\n    w:\n      url: ftp://h\n", `mcp.servers.w.url: must be an http`},
		{"bad url with secrets", "mcp:\n  servers:\n    w:\n      url: ftp://u:SECRET@h/p?key=SECRET\n", `got "ftp://***@h/p?***"`},
		{"headers for a command", "mcp:\n  servers:\n    w:\n      command: [x]\n      headers: {A: b}\n", `mcp.servers.w.headers:`},
		{"servers a list", "mcp:\n  servers: [w]\n", `mcp.servers: want a mapping of names`},
		{"timeout", "mcp:\n  servers:\n    w:\n      command: [x]\n      timeout: soon\n", `mcp.servers.w.timeout:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.yaml), noEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
