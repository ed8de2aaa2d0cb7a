package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// helperEnv, when set, makes the test binary an MCP stdio server (TestHelperProcess).
const helperEnv = "ANIMA_MCP_TEST_HELPER"

// helperServer is the configuration of a stdio server that is this test binary re-run as
// TestHelperProcess.
func helperServer(name string) Server {
	return Server{Name: name, Command: []string{os.Args[0], "-test.run=^TestHelperProcess$"},
		Env: map[string]string{helperEnv: "1"}, Timeout: 5e9}
}

// testTools are the tools of the test servers: echo (with an optional field), crash
// (the process exits mid-call), hang (never answers), and bad, whose schema cannot be
// made strict (an open map).
func testTools(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer"}},"required":["text"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			if _, ok := args["times"]; ok && args["times"] == nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "times must not be null"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("echo: %v", args["text"])},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG....")}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "crash", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {} // past any timeout, and past cancellation too
		})
	s.AddTool(&mcp.Tool{Name: "spawn", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// A grandchild that outlives this server unless its process group is ended.
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
			cmd.Env = append(os.Environ(), helperEnv+"=sleep")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(cmd.Process.Pid)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":{"type":"string"}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
}

// TestHelperProcess is not a test: run with helperEnv set, it serves testTools over
// stdio until its stdin closes.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		t.Skip("the stdio MCP server of the other tests")
	case "sleep":
		select {} // until killed
	case "raw-flood", "raw-pages":
		rawServer(os.Getenv(helperEnv) == "raw-pages")
		os.Exit(0)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "helper", Version: "1"}, nil)
	testTools(s)
	if os.Getenv(helperEnv) == "flood" {
		go flood(s, 25*time.Millisecond)
	}
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

// floodTools is how many tools flood swaps in each time, each with a name of
// floodNameLen bytes.
const floodTools, floodNameLen = 50, 120

// flood is a hostile server's loop: every interval it withdraws the tools it added last
// and adds floodTools new long-named ones, so that each tools/list_changed (the SDK
// sends one 10 ms after the last change) brings names never seen before.
func flood(s *mcp.Server, interval time.Duration) {
	var prev []string
	for gen := 0; ; gen++ {
		s.RemoveTools(prev...)
		prev = prev[:0]
		for i := range floodTools {
			name := fmt.Sprintf("t%d_%d_", gen, i)
			name += strings.Repeat("x", floodNameLen-len(name))
			prev = append(prev, name)
			s.AddTool(&mcp.Tool{Name: name, Description: "A tool that will not stay.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
		time.Sleep(interval)
	}
}

// rawServer is a hostile stdio server written without the SDK, which would debounce its
// notifications: it sends tools/list_changed every 2 ms from the client's initialized on,
// and each tools/list brings 50 tools never listed before, with 120-byte names; with
// pages, each also carries 2 KB descriptions and a nextCursor, forever.
func rawServer(pages bool) {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
		out.Flush()
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20)
	gen := 0
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			continue
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result}) }
		switch msg.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "raw", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}}})
		case "notifications/initialized":
			if !pages {
				go func() {
					for {
						send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
						time.Sleep(2 * time.Millisecond)
					}
				}()
			}
		case "tools/list":
			gen++
			desc := "A tool that will not stay."
			if pages {
				desc = strings.Repeat("d", 2000)
			}
			var tools []any
			for i := range floodTools {
				name := fmt.Sprintf("r%d_%d_", gen, i)
				tools = append(tools, map[string]any{"name": name + strings.Repeat("x", floodNameLen-len(name)),
					"description": desc, "inputSchema": map[string]any{"type": "object"}})
			}
			res := map[string]any{"tools": tools}
			if pages {
				res["nextCursor"] = strconv.Itoa(gen)
			}
			reply(res)
		default:
			if len(msg.ID) > 0 {
				send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
	}
}
