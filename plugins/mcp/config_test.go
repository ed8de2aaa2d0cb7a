package mcp

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/setting"
)

// TestConfigEnabled: the servers switched on, by name, with their secrets revealed for
// the server and the default timeout where none is set.
func TestConfigEnabled(t *testing.T) {
	t.Parallel()
	off := false
	c := Config{Servers: map[string]ServerConfig{
		"web": {URL: "http://h/mcp", Headers: map[string]setting.Secret{"A": "tok"}, Timeout: setting.Duration(5 * time.Second),
			Limits: Limits{Tools: 8}},
		"gone":   {Command: []string{"x"}, Enabled: &off},
		"memory": {Command: []string{"srv", "--stdio"}, Env: map[string]setting.Secret{"K": "v"}, Profiles: []brain.Profile{brain.ProfileDream}},
	}}
	want := []Server{
		{Name: "memory", Command: []string{"srv", "--stdio"}, Env: map[string]string{"K": "v"}, Profiles: []brain.Profile{brain.ProfileDream}, Timeout: defaultTimeout},
		{Name: "web", URL: "http://h/mcp", Headers: map[string]string{"A": "tok"}, Timeout: 5 * time.Second, Limits: Limits{Tools: 8}},
	}
	if diff := cmp.Diff(want, c.Enabled(), cmpopts.IgnoreUnexported(Server{})); diff != "" {
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

// TestConfigValidateLimits: a negative limit is named by its full key; zero (the
// default) and positive ones pass.
func TestConfigValidateLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		limits Limits
		want   []string
	}{
		{"defaults", Limits{}, nil},
		{"set", Limits{Tools: 5, DescriptionBytes: 100, SchemaBytes: 1000, ListPages: 2, ListBytes: 1 << 20, MessageBytes: 1 << 20,
			RefreshEvery: setting.Duration(time.Second)}, nil},
		{"negative", Limits{Tools: -1, MessageBytes: -5, RefreshEvery: -1},
			[]string{"mcp.servers.w.limits.tools", "mcp.servers.w.limits.message_bytes", "mcp.servers.w.limits.refresh_every"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p setting.Checker
			Config{Servers: map[string]ServerConfig{"w": {Command: []string{"x"}, Limits: tc.limits}}}.Validate(&p, "mcp")
			var keys []string
			for _, e := range p {
				keys = append(keys, e.Key)
			}
			if diff := cmp.Diff(tc.want, keys); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
