package bot

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/mcp"
)

// defaultMCPTimeout bounds an MCP call when mcp.servers.<name>.timeout is unset.
const defaultMCPTimeout = 30 * time.Second

// MCPServers are the enabled servers of the mcp section, by name.
func MCPServers(cfg config.MCPConfig) []mcp.Server {
	var out []mcp.Server
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if !s.On() {
			continue
		}
		timeout := s.Timeout.Std()
		if timeout == 0 {
			timeout = defaultMCPTimeout
		}
		out = append(out, mcp.Server{Name: name, Command: s.Command, Env: reveal(s.Env), URL: s.URL, Headers: reveal(s.Headers),
			Profiles: s.Profiles, Tools: s.Tools, Timeout: timeout})
	}
	return out
}

// reveal returns the secrets' values, for handing to the server.
func reveal(m map[string]config.Secret) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.Reveal()
	}
	return out
}

// mcpStatus is what /status and /readyz show of the MCP servers (mcp.Manager).
type mcpStatus interface {
	Status() []mcp.Status
}

// mcpDown is /status's line for the MCP servers that are down, "" when none is.
func mcpDown(m mcpStatus, now time.Time) string {
	if m == nil {
		return ""
	}
	var down []string
	for _, s := range m.Status() {
		if !s.Up && !s.Since.IsZero() {
			down = append(down, fmt.Sprintf("%s (for %s)", s.Name, brain.Duration(now.Sub(s.Since))))
		}
	}
	if len(down) == 0 {
		return ""
	}
	return "Outside tools not available: " + strings.Join(down, ", ") + "."
}

// mcpLines are /readyz's informational lines, one per MCP server: they never make anima
// unready, since it runs on without a server's tools.
func mcpLines(m mcpStatus) []string {
	var out []string
	for _, s := range m.Status() {
		state := "up"
		if !s.Up {
			state = "down"
		}
		out = append(out, fmt.Sprintf("mcp %s: %s", s.Name, state))
	}
	return out
}
