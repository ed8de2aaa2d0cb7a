// Command anima runs the anima companion bot: `anima run` serves Telegram, `anima chat`
// talks on the console, `anima check` validates a configuration, `anima backup` copies
// the store while the service runs, `anima compact` rewrites a stopped service's store
// without the space (and the bytes) of deleted data, `anima health` asks a running
// instance whether it is ready (the container health check), `anima version` prints the
// version.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
	_ "time/tzdata" // user time zones work in a distroless image too

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

const usage = `anima — a Telegram companion that writes first only when it has a reason

Usage:
  anima init [--out anima.yaml]        ask for the bot token, the model endpoint and your
                                      Telegram user, check each, and write a config
  anima run    [FILE]                 serve Telegram (SIGINT/SIGTERM stop it gracefully)
  anima chat   [FILE] [--store F]     talk to anima on this console (no Telegram token
                                      needed; its own store, chat.db beside storage.path)
  anima check  [FILE]                 exit 0 only if ` + "`anima run`" + ` would start with FILE
  anima backup [FILE] --out F         copy the store (hot, while the service runs)
  anima compact [FILE]                rewrite the store without deleted data (service stopped)
  anima dead list|show ID|retry ID [FILE]
                                      list, show or retry failed work kept for 7 days
  anima mcp list [FILE]               start each MCP server, print its tools and exit
  anima health [FILE] [--timeout D]   exit 0 if the running instance's /readyz (at
                                      metrics.listen) answers 200 within D (3s)
  anima sim    [FILE] [--days N]      replay N silent days under a simulated clock and
                                      show when anima would write first (no model calls)
  anima sim    [FILE] --scenario S --out DIR
                                      replay a scripted user (examples/sim/) through the
                                      brain, store and cognition with an offline model;
                                      writes timeline.csv, timeline.png and summary.txt
  anima version                       print the version

FILE is the configuration: the argument, or --config FILE, or $ANIMA_CONFIG, else
config.yaml. ` + "`anima COMMAND --help`" + ` lists a command's flags.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "anima %s\n", bot.Version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	case "init":
		return initCommand(args, stdin, stdout, stderr)
	case "dead":
		return dead(args, stdout, stderr) // dead.go
	case "mcp":
		return runMCP(args, stdout, stderr)
	case "run", "chat", "check", "backup", "sim", "health", "compact":
	default:
		fmt.Fprintf(stderr, "anima: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	f := newFlags(cmd, stderr)
	if code, ok := f.parse(args, stdout); !ok {
		return code
	}
	cfgPath, out, days, scenario, timeout := f.config, f.out, f.days, f.scenario, f.timeout
	cpuProfile, memProfile := f.cpuProfile, f.memProfile

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch cmd {
	case "check":
		return check(*cfgPath, stdout, stderr)
	case "sim":
		cfg, err := config.Check(*cfgPath, false)
		if err != nil {
			fmt.Fprintf(stderr, "anima: %s\n", err)
			return 1
		}
		if *days < 1 || *days > 366 {
			fmt.Fprintln(stderr, "anima sim: --days must be 1..366")
			return 2
		}
		if *scenario != "" || *out != "" {
			return simScenario(ctx, f.simArgs(), *scenario, *out, stdout, stderr)
		}
		res, err := bot.Simulate(cfg, *days)
		if err != nil {
			fmt.Fprintf(stderr, "anima: %s\n", err)
			return 1
		}
		bot.PrintSim(stdout, res)
		return 0
	case "compact":
		cfg, err := config.Check(*cfgPath, false)
		if err != nil {
			fmt.Fprintf(stderr, "anima: %s\n", err)
			return 1
		}
		rep, err := bot.Compact(cfg.Storage.Path)
		if err != nil {
			fmt.Fprintf(stderr, "anima: %s\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "compacted %s: %d → %d bytes (%v)\n", cfg.Storage.Path, rep.Before, rep.After, rep.Took.Round(time.Millisecond))
		return 0
	case "health":
		cfg, err := config.Check(*cfgPath, false)
		if err != nil {
			fmt.Fprintf(stderr, "anima: %s\n", err)
			return 1
		}
		if err := bot.Health(ctx, cfg.Metrics.Listen, *timeout); err != nil {
			fmt.Fprintf(stderr, "anima health: %s\n", err)
			return 1
		}
		fmt.Fprintln(stdout, "ready")
		return 0
	case "backup":
		if *out == "" {
			fmt.Fprintln(stderr, "anima backup: --out FILE is required")
			return 2
		}
		cfg, err := config.Check(*cfgPath, false)
		if err != nil {
			fmt.Fprintf(stderr, "anima: %s\n", err)
			return 1
		}
		start := time.Now()
		n, err := bot.Backup(ctx, cfg.Storage.Path, *out)
		if err != nil {
			fmt.Fprintf(stderr, "anima: %s\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "backed up %s to %s (%d bytes, %v)\n", cfg.Storage.Path, *out, n, time.Since(start).Round(time.Millisecond))
		return 0
	}

	cfg, err := config.Check(*cfgPath, cmd == "run")
	if err == nil && cmd == "chat" {
		err = cfg.ValidateChat()
	}
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	if cmd == "chat" {
		cfg.Storage.Path = chatStore(cfg.Storage.Path, *f.store)
	}
	log := bot.NewLogger(cfg.Log, stderr)
	if cmd == "run" && cfg.Telegram.HasExampleUser() {
		log.Warn(exampleUserWarning, "example_user_id", config.ExampleUserID)
	}
	opts := bot.Options{Logger: log}
	if cmd == "chat" {
		opts.Console, opts.In, opts.Out = true, stdin, stdout
	}
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	code := 0
	if err := bot.Run(ctx, cfg, opts); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("anima failed", "err", err)
		code = 1
	}
	if err := stopProfiles(); err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return 1
	}
	return code
}

// simScenario runs `anima sim --scenario S --out DIR` by handing the arguments to the
// anima-sim binary beside this one (or on PATH): drawing the timeline with gonum/plot
// costs every process that links it a few MB at start, which the service must not pay.
func simScenario(ctx context.Context, args []string, path, dir string, stdout, stderr io.Writer) int {
	if path == "" || dir == "" {
		fmt.Fprintln(stderr, "anima sim: --scenario FILE and --out DIR go together")
		return 2
	}
	bin, err := simBinary()
	if err != nil {
		fmt.Fprintf(stderr, "anima sim: %s\n", err)
		return 1
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "anima sim: run %s: %s\n", bin, err)
		return 1
	}
	return 0
}

// simBinary finds anima-sim: beside this executable first, then on PATH.
func simBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "anima-sim")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("anima-sim"); err == nil {
		return p, nil
	}
	return "", errors.New("--scenario needs the anima-sim binary beside anima or on PATH: " +
		"`make build` builds bin/anima-sim, or run `go run ./cmd/anima-sim` with the same flags")
}
