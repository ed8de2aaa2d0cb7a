// Package mcp gives the model tools from Model Context Protocol servers: it starts and
// supervises each configured server (a stdio child or a streamable-HTTP endpoint), lists
// its tools, adapts each to a brain.Tool with a strict schema, and hands them to the
// cognition registry, where they obey the same profiles, per-run budget and untrusted
// fence as anima's own tools. Each server is bounded by its Limits, whatever it sends.
// Files follow the flow: a server's lifecycle (supervise.go, connect.go, bodylimit.go), its
// listing within its limits (limits.go, listtools.go, refresh.go), its tools' schemas and
// names (schema.go, tool.go), a call (call.go), and what is measured (metrics.go).
package mcp

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// Server is one configured MCP server (mcp.servers.<name>).
type Server struct {
	// Name prefixes its tools: <name>_<tool>.
	Name string
	// Command is the argv of a stdio server (no shell); Env is added to anima's environment.
	Command []string
	Env     map[string]string
	// URL is a streamable-HTTP endpoint, used when Command is empty; Headers go with each
	// request.
	URL     string
	Headers map[string]string
	// Profiles are the profiles its tools are offered in besides chat, which offers every tool.
	Profiles []brain.Profile
	// Tools is an allow-list of the server's tool names; empty allows all.
	Tools []string
	// Timeout bounds each call.
	Timeout time.Duration
	// Limits bound what the server can make anima hold; New sets zero fields to defaults.
	Limits Limits

	// dial, when set, is how to reach the server instead of Command or URL: tests serve
	// an SDK server in process with it.
	dial func() mcp.Transport
}

// Sink receives a server's tools whenever they change: on start, on tools/list_changed,
// and an empty list when the server goes down. It returns the tools it refused, each with
// why (a bad name, a duplicate, a schema that is not strict).
type Sink interface {
	SetTools(group string, tools []brain.Tool) []error
}

// Options are what New takes besides the servers; all may be zero.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// MaxResult caps a call's result text in bytes (default 8 KiB).
	MaxResult int
	// Backoff is the first restart delay after a server dies (default 1 s); it doubles to
	// MaxBackoff (default 1 min) and is reset once a server has stayed up a minute.
	Backoff, MaxBackoff time.Duration
	// Wait waits d or until ctx ends; nil is brain.Sleep. Tests pass one that returns at once.
	Wait func(ctx context.Context, d time.Duration) error
	// Pids is the file where the process groups of the stdio servers are recorded, beside
	// the store, so that Run ends what a run killed with SIGKILL left (procFile); "" (anima
	// mcp list) records none and ends none.
	Pids string
}
