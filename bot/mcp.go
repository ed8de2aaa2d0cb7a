package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/mcp"
)

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
