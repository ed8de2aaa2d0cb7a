package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/memory/bench"
)

const benchUsage = `Usage:
  anima bench memory [--config F] [--k N] [--json] [--live [--yes]] FILE…
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
	live := fs.Bool("live", false, "embed with --config's llm.embedding_model on its endpoint (prints the requests; spends them only with --yes)")
	yes := fs.Bool("yes", false, "with --live: spend the requests")
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
	run := benchRun{cfgPath: *cfgPath, k: *k, asJSON: *asJSON, live: *live, yes: *yes, files: files}
	return func(ctx context.Context) int { return benchMemory(ctx, run, stdout, stderr) }, 0, true
}

// benchRun is a parsed `anima bench memory` command line.
type benchRun struct {
	cfgPath           string
	k                 int
	asJSON, live, yes bool
	files             []string
}

// benchMemory is `anima bench memory` parsed.
func benchMemory(ctx context.Context, b benchRun, stdout, stderr io.Writer) int {
	cfgPath, k, asJSON, files := b.cfgPath, b.k, b.asJSON, b.files
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
	opts := bench.Options{BudgetTokens: cfg.LLM.ContextTokens, K: k}
	if b.live || b.yes {
		var code int
		if opts.Embedder, code = liveEmbedder(cfg, cfgPath, b.live, b.yes, convs, stdout, stderr); opts.Embedder == nil {
			return code
		}
	}
	r, err := bench.Run(ctx, convs, opts)
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

// liveEmbedder is the embedder of --live: the configuration's llm.embedding_model on its
// endpoint, once the requests it would make are printed, and only with --yes; nil and the
// exit code otherwise (2, as for an incomplete command line, when --yes is missing: a
// script that forgot it does not read lexical figures as fused ones).
func liveEmbedder(cfg config.Config, cfgPath string, live, yes bool, convs []bench.Conversation, stdout, stderr io.Writer) (memory.Embedder, int) {
	switch {
	case !live:
		fmt.Fprintln(stderr, "anima bench memory: --yes goes with --live")
		return nil, 2
	case cfgPath == "" || cfg.LLM.EmbeddingModel == "":
		fmt.Fprintln(stderr, "anima bench memory: --live needs --config FILE with llm.embedding_model set")
		return nil, 2
	}
	model := cfg.LLM.EmbeddingModel
	requests, tokens := bench.Estimate(convs)
	fmt.Fprintf(stdout, "live bench: at most %d embedding requests (about %d tokens) to %s with %s\n",
		requests, tokens, brain.RedactURL(cfg.LLM.BaseURL), model)
	if !yes {
		fmt.Fprintln(stderr, "anima bench memory: nothing was sent; add --yes to spend them")
		return nil, 2
	}
	client := cognition.NewClient(cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal(), cfg.LLM.RequestTimeout.Std())
	return memory.OpenAIEmbedder{Client: client, Model: model, Dimensions: memory.EmbedderDimensions(model)}, 0
}
