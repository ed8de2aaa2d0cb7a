package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/mcp"
)

const mcpUsage = `Usage:
  anima mcp list [FILE] [-v]   start each MCP server of mcp.servers, print the tools it
                               offers (as <server>_<tool>) and why any is not, then exit
FILE is the configuration, also --config FILE; without either:
` + configRule + ".\n"

// parseMCP parses `anima mcp list [FILE] [-v]`; the command exits 1 when a server cannot
// be started or listed.
func parseMCP(args []string, stdout, stderr io.Writer) (do func(context.Context) int, code int, ok bool) {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, mcpUsage)
		return nil, 0, false
	}
	if len(args) == 0 || args[0] != "list" {
		fmt.Fprint(stderr, mcpUsage)
		return nil, 2, false
	}
	fs := flag.NewFlagSet("anima mcp list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	cfgPath := fs.String("config", defaultConfig(), "configuration `FILE`, also given as the last argument; without either: "+configRule)
	verbose := fs.Bool("v", false, "log what the servers do")
	rest, _, err := interleave(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, mcpUsage)
			return nil, 0, false
		}
		fmt.Fprint(stderr, mcpUsage)
		return nil, 2, false
	}
	switch {
	case len(rest) == 1 && flagSet(fs, "config"):
		fmt.Fprintln(stderr, "anima mcp list: two configuration files: give FILE or --config, not both")
		return nil, 2, false
	case len(rest) == 1:
		*cfgPath = rest[0]
	case len(rest) > 1:
		fmt.Fprintf(stderr, "anima mcp list: one configuration file, not %d arguments: %q\n", len(rest), rest)
		fmt.Fprint(stderr, mcpUsage)
		return nil, 2, false
	}
	return func(ctx context.Context) int { return mcpList(ctx, *cfgPath, *verbose, stdout, stderr) }, 0, true
}

// mcpList is `anima mcp list` parsed.
func mcpList(ctx context.Context, cfgPath string, verbose bool, stdout, stderr io.Writer) int {
	cfg, err := config.Check(cfgPath, false)
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	servers := cfg.MCP.Enabled()
	if len(servers) == 0 {
		fmt.Fprintf(stdout, "%s: no MCP servers enabled under mcp.servers\n", cfgPath)
		return 0
	}
	var opts mcp.Options
	if verbose {
		opts.Logger = bot.NewLogger(cfg.Log, stderr)
	} else {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// What a server chose (its tools' names and descriptions, its errors' text) is
	// printed escaped: it could otherwise retitle the terminal, clear it or overwrite a line.
	p := brain.Printable
	code := 0
	for _, l := range mcp.New(servers, nil, opts).List(ctx) {
		if l.Err != nil {
			fmt.Fprintf(stdout, "%s: not available: %s\n", p(l.Server), p(l.Err.Error()))
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: %d tools\n", p(l.Server), len(l.Tools))
		for _, t := range l.Tools {
			desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
			if t.Offered == "" {
				fmt.Fprintf(stdout, "  - %s (not offered: %s)\n", p(t.Name), p(t.Why))
				continue
			}
			fmt.Fprintf(stdout, "  %s  %s\n", p(t.Offered), p(desc))
		}
	}
	return code
}
