package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/memory/bench"
)

const benchUsage = `Usage:
  anima bench memory [--config F] [--k N] [--json] FILE…
      write each conversation of FILE (LoCoMo's JSON: one conversation, or an array of
      them as locomo10.json) into a fresh temporary store through the service's path,
      ask each of its questions through the Recall the prompt builder calls, and print
      whether the turns holding the answer were recalled: overall, per category and per
      conversation. Speaker A is the person, speaker B anima; no model is called.
      Flags may come before or after the files.
Flags:
`

// parseBench parses `anima bench memory FILE…` (docs/memory-bench.md).
func parseBench(args []string, stdout, stderr io.Writer) (do func(context.Context) int, code int, ok bool) {
	fs := flag.NewFlagSet("anima bench memory", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", "", "configuration `FILE` whose budgets to use (llm.context_tokens); without it the defaults")
	k := fs.Int("k", 0, "also report memory search's recall@`N`: some evidence turn among the top N (1–50)")
	asJSON := fs.Bool("json", false, "print the figures as JSON (overall, categories, conversations)")
	usage := func(w io.Writer, code int) (func(context.Context) int, int, bool) {
		fmt.Fprint(w, benchUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		return nil, code, false
	}
	if len(args) == 0 || args[0] != "memory" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return usage(stdout, 0)
		}
		return usage(stderr, 2)
	}
	files, err := parseInterleaved(fs, args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		return usage(stdout, 0)
	case err != nil:
		fmt.Fprintf(stderr, "anima bench memory: %s\n", err)
		return usage(stderr, 2)
	case len(files) == 0 || *k < 0 || *k > 50:
		fmt.Fprintln(stderr, "anima bench memory: give one or more conversation files, and --k between 1 and 50")
		return usage(stderr, 2)
	}
	return func(ctx context.Context) int { return benchMemory(ctx, *cfgPath, *k, *asJSON, files, stdout, stderr) }, 0, true
}

// benchMemory is `anima bench memory` parsed.
func benchMemory(ctx context.Context, cfgPath string, k int, asJSON bool, files []string, stdout, stderr io.Writer) int {
	cfg := config.Default()
	if cfgPath != "" {
		var ok bool
		if cfg, ok = loadConfig(cfgPath, stderr); !ok {
			return 1
		}
	}
	var convs []bench.Conversation
	for _, path := range files {
		c, err := bench.Load(path)
		if err != nil {
			fmt.Fprintf(stderr, "anima bench memory: %s\n", err)
			return 1
		}
		convs = append(convs, c...)
	}
	r, err := bench.Run(ctx, convs, bench.Options{BudgetTokens: cfg.LLM.ContextTokens, K: k})
	if err == nil && asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else if err == nil {
		err = r.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "anima bench memory: %s\n", err)
		return 1
	}
	return 0
}
