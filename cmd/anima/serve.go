package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
)

// serve is `anima run` (Telegram) and `anima chat` (this console, its own store): it
// checks the configuration for cmd, builds the logger and runs bot.Run until ctx ends,
// under the profiles --cpuprofile and --memprofile ask for. The service runs on one P
// unless GOMAXPROCS says otherwise (oneProc).
func serve(ctx context.Context, cmd string, f *cmdFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := config.Check(*f.config, cmd == "run")
	if err == nil && cmd == "chat" {
		err = cfg.ValidateChat()
	}
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", prefixPath(*f.config, err))
		return 1
	}
	if cmd == "chat" {
		cfg.Storage.Path = chatStore(cfg.Storage.Path, *f.store)
		if !*f.metrics {
			// The service beside it holds metrics.listen; a console needs no scrape target.
			cfg.Metrics.Listen = ""
		}
	}
	log := bot.NewLogger(cfg.Log, stderr)
	if cmd == "run" && cfg.Telegram.HasExampleUser() {
		log.Warn(exampleUserWarning, "example_user_id", config.ExampleUserID)
	}
	opts := bot.Options{Logger: log, ConfigFile: absPath(*f.config)}
	if cmd == "chat" {
		opts.Console, opts.In, opts.Out = true, stdin, stdout
	} else {
		log.Debug("scheduler", "gomaxprocs", oneProc())
		opts.Settled = func() { afterStart(log) }
	}
	stopProfiles, err := startProfiles(*f.cpuProfile, *f.memProfile)
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	code := 0
	if err := bot.Run(ctx, cfg, opts); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("anima failed", "config", *f.config, "err", err)
		code = 1
	}
	if err := stopProfiles(); err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	return code
}

// absPath is path made absolute, for a log that is read far from the directory anima was
// started in; path as it is when the working directory cannot be read.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
