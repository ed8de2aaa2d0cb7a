// Command anima runs the anima companion bot: `anima run` serves Telegram, `anima chat`
// talks on the console, `anima check` validates a configuration, `anima backup` copies
// the store while the service runs, `anima compact` rewrites a stopped service's store
// without the space (and the bytes) of deleted data, `anima health` asks a running
// instance whether it is ready (the container health check), `anima bench memory` measures
// recall on LoCoMo conversations, `anima version` prints the version.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	_ "time/tzdata" // user time zones work in a distroless image too

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
)

func main() {
	bi, _ := debug.ReadBuildInfo()
	bot.Version = buildVersion(bot.Version, bi) // a plain go build says its commit, not dev
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `anima — a Telegram companion that writes first only when it has a reason

Usage:
  anima init [--out anima.yaml]        ask for the bot token, the model endpoint and your
                                      Telegram user, check each, and write a config
  anima run    [FILE]                 serve Telegram (SIGINT/SIGTERM stop it gracefully)
  anima chat   [FILE] [--store F]     talk to anima on this console (no Telegram token
                                      needed; its own store, chat.db beside storage.path;
                                      no metrics server unless --metrics)
  anima check  [FILE] [--offline]     exit 0 only if ` + "`anima run`" + ` would start with FILE;
                                      lists every problem, asks Telegram and the model
                                      endpoint unless --offline
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
  anima bench memory [--k N] [--json] FILE…
                                      write LoCoMo conversations into temporary stores and
                                      measure what Recall finds of each answer's turns
  anima install [FILE] [--dry-run]    put anima in service under systemd from init's file:
                                      binary, file, store and unit in place, started and
                                      checked (as root the system unit, else a user unit)
  anima uninstall [--dry-run]         stop and remove the unit and binary; keeps the store
  anima version                       print the version

FILE is the configuration: the argument, else --config FILE, else $ANIMA_CONFIG, else
the first that exists of $CREDENTIALS_DIRECTORY/anima.yaml (systemd's LoadCredential=)
and ./anima.yaml (what ` + "`anima init`" + ` writes), else ./config.yaml.
` + "`anima COMMAND --help`" + ` lists a command's flags.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	do, code, ok := parse(args, stdin, stdout, stderr)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return do(ctx)
}

// parse parses a command line without acting on it: it returns the command, ready to
// run, or ok false with the exit code when parsing was the whole of it (0 after --help,
// 2 after a usage error, said on stderr). Flags may come before or after FILE.
func parse(args []string, stdin io.Reader, stdout, stderr io.Writer) (do func(context.Context) int, code int, ok bool) {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return nil, 2, false
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "version", "--version", "-v":
		return parseVersion(args, stdout, stderr)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return nil, 0, false
	case "init":
		return func(context.Context) int { return initCommand(args, stdin, stdout, stderr) }, 0, true
	case "dead":
		return parseDead(args, stdout, stderr) // dead.go
	case "mcp":
		return parseMCP(args, stdout, stderr) // mcp.go
	case "bench":
		return parseBench(args, stdout, stderr) // bench.go
	case "install", "uninstall":
		return func(context.Context) int { return installCommand(cmd, args, stdout, stderr) }, 0, true // install.go
	case "run", "chat", "check", "backup", "sim", "health", "compact":
	default:
		fmt.Fprintf(stderr, "anima: unknown command %q\n\n%s", cmd, usage)
		return nil, 2, false
	}
	f := newFlags(cmd, stderr)
	if code, ok := f.parse(args, stdout); !ok {
		return nil, code, false
	}
	return func(ctx context.Context) int {
		switch cmd {
		case "check":
			return check(ctx, *f.config, *f.offline, stdout, stderr)
		case "sim":
			return simCommand(ctx, f, stdout, stderr) // sim.go
		case "compact":
			return compactCommand(f, stdout, stderr) // store.go
		case "health":
			return healthCommand(ctx, f, stdout, stderr) // health.go
		case "backup":
			return backupCommand(ctx, f, stdout, stderr) // store.go
		}
		return serve(ctx, cmd, f, stdin, stdout, stderr) // serve.go
	}, 0, true
}

// loadConfig reads and validates the configuration of a command that does not serve
// (config.Check without the run-time checks); ok is false, with the error on stderr,
// when it cannot be used.
func loadConfig(path string, stderr io.Writer) (cfg config.Config, ok bool) {
	cfg, err := readConfig(path, false, func(w string) { fmt.Fprintf(stderr, "anima: warning: %s: %s\n", path, w) })
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return cfg, false
	}
	return cfg, true
}

// readConfig is config.Check with a relative storage.path taken relative to the file's
// folder (Config.ResolveStore); warn is given what ResolveStore says of a store left
// where the working directory put it.
func readConfig(path string, run bool, warn func(string)) (config.Config, error) {
	cfg, err := config.Check(path, run)
	if err != nil {
		return cfg, err
	}
	if w := cfg.ResolveStore(path); w != "" {
		warn(w)
	}
	return cfg, nil
}

// parseVersion is `anima version`: it prints the version; --help says so instead.
func parseVersion(args []string, stdout, stderr io.Writer) (do func(context.Context) int, code int, ok bool) {
	switch {
	case len(args) == 0:
		return func(context.Context) int {
			fmt.Fprintf(stdout, "anima %s\n", bot.Version)
			return 0
		}, 0, true
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		fmt.Fprint(stdout, "Usage: anima version\n\nPrints the version of this anima (git describe when it was built, else the commit a plain go build recorded) and exits.\n")
		return nil, 0, false
	default:
		fmt.Fprintf(stderr, "anima version: takes no arguments or flags, not %q\n", args)
		return nil, 2, false
	}
}
