package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
)

// missing is path and its folders that do not exist yet, path first: what opening a
// store at path creates.
func missing(path string) []string {
	var out []string
	if side := path + ".sent"; !exists(side) { // the store's sent log (storage/sentlog.go)
		out = append(out, side)
	}
	for p := filepath.Clean(path); !exists(p); p = filepath.Dir(p) {
		out = append(out, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	return out
}

// removeMade removes what opening the store created (missing's answer), the store file
// and the folders made for it, each only if it is still there and a folder only if empty.
func removeMade(made []string, log *slog.Logger) {
	for _, p := range made {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Debug("left what the failed start made", "path", p, "err", err)
			return
		}
	}
}

// serve is `anima run` (Telegram) and `anima chat` (this console, its own store): it
// checks the configuration for cmd, builds the logger and runs bot.Run until ctx ends,
// under the profiles --cpuprofile and --memprofile ask for. The service runs on one P
// unless GOMAXPROCS says otherwise (oneProc).
func serve(ctx context.Context, cmd string, f *cmdFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	var moved string
	cfg, err := readConfig(*f.config, cmd == "run", func(w string) { moved = w })
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
	if cmd == "chat" && cfg.Log.SlogLevel() == slog.LevelInfo {
		// The conversation is on this terminal: only warnings and errors join it (on
		// stderr); log.level debug still shows everything.
		cfg.Log.Level = "warn"
	}
	log := bot.NewLogger(cfg.Log, stderr)
	if moved != "" {
		log.Warn(moved, "config", *f.config, "store", cfg.Storage.Path)
	}
	if cmd == "run" && cfg.Telegram.HasExampleUser() {
		log.Warn(exampleUserWarning, "example_user_id", config.ExampleUserID)
	}
	opts := bot.Options{Logger: log, ConfigFile: absPath(*f.config)}
	if cmd == "chat" {
		opts.Console, opts.In, opts.Out = true, stdin, stdout
		if interactive(stdin) {
			p := newPromptWriter(stdout)
			opts.In, opts.Out = typedReader{stdin, p}, p
		}
	} else {
		log.Debug("scheduler", "gomaxprocs", oneProc())
		opts.Settled = func() { afterStart(log) }
	}
	stopProfiles, err := startProfiles(*f.cpuProfile, *f.memProfile)
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	// A start that fails (a token Telegram refuses, an address in use) leaves no new
	// store behind: the next start, from wherever, finds none rather than an empty one.
	made := missing(cfg.Storage.Path)
	var started atomic.Bool
	opts.Started = func(bot.Addrs) { started.Store(true) }
	code := 0
	if err := bot.Run(ctx, cfg, opts); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("anima failed", "config", *f.config, "err", err)
		code = 1
		if !started.Load() {
			removeMade(made, log)
		}
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
