package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServeArg makes this binary a tiny stdio MCP server instead of a load test: with
// --serve and no --mcp, anima is configured with it, so the dashboard's MCP row has a
// server (up, its call series at 0) for scripts/stack-check to find.
const mcpServeArg = "--mcp-server"

type clockArgs struct {
	Zone string `json:"zone" jsonschema:"an IANA time zone, e.g. Europe/Berlin"`
}

// serveMCP serves one read-only tool, clock_now, over stdin/stdout until stdin closes.
func serveMCP() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "loadtest", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "now", Description: "The current time in a time zone.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a clockArgs) (*mcp.CallToolResult, any, error) {
			loc, err := time.LoadLocation(a.Zone)
			if err != nil {
				return nil, nil, fmt.Errorf("unknown time zone %q", a.Zone)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: time.Now().In(loc).Format(time.RFC1123)}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "loadtest mcp server:", err)
		return 1
	}
	return 0
}

// selfMCP is the --mcp value that runs this binary as serveMCP's server.
func selfMCP() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this binary for its MCP server: %w", err)
	}
	if strings.ContainsAny(exe, " \t") {
		return "", fmt.Errorf("this binary's path %q has a space; give --mcp instead", exe)
	}
	return exe + " " + mcpServeArg, nil
}
