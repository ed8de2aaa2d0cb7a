package mcp

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/setting"
)

// Config is the mcp section of the configuration: Model Context Protocol servers whose
// tools the model may call, each under mcp.servers.<name>.
type Config struct {
	Servers map[string]ServerConfig `yaml:"servers"`
}

// ServerConfig is one MCP server: a stdio command or a streamable-HTTP url.
type ServerConfig struct {
	// Command is the argv of a stdio server, run without a shell.
	// Env's and Headers' values are secrets (API keys, tokens), never printed.
	Command []string                  `yaml:"command"`
	Env     map[string]setting.Secret `yaml:"env"`
	// URL is a streamable-HTTP endpoint, instead of command; Headers go with each request.
	URL     string                    `yaml:"url"`
	Headers map[string]setting.Secret `yaml:"headers"`
	// Profiles are where its tools are offered: chat (always), proactive, dream.
	Profiles []brain.Profile `yaml:"profiles"`
	// Tools is an allow-list of the server's tool names; empty allows all.
	Tools   []string         `yaml:"tools"`
	Timeout setting.Duration `yaml:"timeout"` // per call; 0 is 30s
	// Enabled switches the server; absent is true.
	Enabled *bool `yaml:"enabled"`
	// Limits bound what the server can make anima hold; zero fields take the defaults.
	Limits Limits `yaml:"limits"`
}

// On reports whether the server is switched on (enabled absent or true).
func (s ServerConfig) On() bool { return s.Enabled == nil || *s.Enabled }

// defaultTimeout bounds a call when mcp.servers.<name>.timeout is unset.
const defaultTimeout = 30 * time.Second

// Enabled returns the servers switched on, in the order of their names.
func (c Config) Enabled() []Server {
	var out []Server
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		if !s.On() {
			continue
		}
		timeout := s.Timeout.Std()
		if timeout == 0 {
			timeout = defaultTimeout
		}
		out = append(out, Server{Name: name, Command: s.Command, Env: reveal(s.Env), URL: s.URL, Headers: reveal(s.Headers),
			Profiles: s.Profiles, Tools: s.Tools, Timeout: timeout, Limits: s.Limits})
	}
	return out
}

// reveal returns the secrets' values, for handing to the server.
func reveal(m map[string]setting.Secret) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.Reveal()
	}
	return out
}

// serverName is what an MCP server's name may be: it prefixes its tools' names.
func serverName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Validate adds to p a problem for each bad key of c.Servers, in the order of their
// names; section is the section's full key (mcp).
func (c Config) Validate(p *setting.Checker, section string) {
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		key := section + ".servers." + name
		if !serverName(name) {
			p.Add(key, "a server's name prefixes its tools' names: use 1 to 32 of A-Z a-z 0-9 - (no _); got %q", name)
		}
		switch {
		case len(s.Command) > 0 && s.URL != "":
			p.Add(key, "set either command (a stdio server) or url (streamable HTTP), not both")
		case len(s.Command) == 0 && s.URL == "":
			p.Add(key, "set command (the argv of a stdio server) or url (a streamable-HTTP endpoint)")
		case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
			p.Add(key+".command", "the program (its first element) must not be empty")
		case s.URL != "":
			p.HTTPURL(key+".url", s.URL, false)
		}
		if len(s.Headers) > 0 && s.URL == "" {
			p.Add(key+".headers", "are sent only to a url server; this one runs a command")
		}
		for _, pr := range s.Profiles {
			p.OneOf(key+".profiles", string(pr), string(brain.ProfileChat), string(brain.ProfileProactive), string(brain.ProfileDream))
		}
		for _, t := range s.Tools {
			p.NotEmpty(key+".tools", t)
		}
		s.Limits.validate(p, key+".limits")
	}
}
