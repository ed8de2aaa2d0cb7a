package mcp

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/anima-bot/anima/bot/config/setting"
	"github.com/anima-bot/anima/brain"
)

// TestConfigEnabled: the servers switched on, by name, with their secrets revealed for
// the server and the default timeout where none is set.
func TestConfigEnabled(t *testing.T) {
	t.Parallel()
	off := false
	c := Config{Servers: map[string]ServerConfig{
		"web":    {URL: "http://h/mcp", Headers: map[string]setting.Secret{"A": "tok"}, Timeout: setting.Duration(5 * time.Second)},
		"gone":   {Command: []string{"x"}, Enabled: &off},
		"memory": {Command: []string{"srv", "--stdio"}, Env: map[string]setting.Secret{"K": "v"}, Profiles: []brain.Profile{brain.ProfileDream}},
	}}
	want := []Server{
		{Name: "memory", Command: []string{"srv", "--stdio"}, Env: map[string]string{"K": "v"}, Profiles: []brain.Profile{brain.ProfileDream}, Timeout: defaultTimeout},
		{Name: "web", URL: "http://h/mcp", Headers: map[string]string{"A": "tok"}, Timeout: 5 * time.Second},
	}
	if diff := cmp.Diff(want, c.Enabled()); diff != "" {
		t.Errorf("Enabled (-want +got):\n%s", diff)
	}
}

// TestConfigValidateNamesTheFullKey: each problem is named under the section's key.
func TestConfigValidateNamesTheFullKey(t *testing.T) {
	t.Parallel()
	var p setting.Checker
	Config{Servers: map[string]ServerConfig{"w": {URL: "ftp://h"}}}.Validate(&p, "mcp")
	if len(p) != 1 || p[0].Key != "mcp.servers.w.url" {
		t.Errorf("problems %v, want one for mcp.servers.w.url", p)
	}
}
