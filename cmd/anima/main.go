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
	"syscall"
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
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "version", "--version", "-v":
		return versionCommand(args, stdout, stderr)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	case "init":
		return initCommand(args, stdin, stdout, stderr)
	case "dead":
		return dead(args, stdout, stderr) // dead.go
	case "mcp":
		return runMCP(args, stdout, stderr)
	case "bench":
		return benchCommand(args, stdout, stderr) // bench.go
	case "install", "uninstall":
		return installCommand(cmd, args, stdout, stderr) // install.go
	case "run", "chat", "check", "backup", "sim", "health", "compact":
	default:
		fmt.Fprintf(stderr, "anima: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	f := newFlags(cmd, stderr)
	if code, ok := f.parse(args, stdout); !ok {
		return code
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

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
}

// loadConfig reads and validates the configuration of a command that does not serve
// (config.Check without the run-time checks); ok is false, with the error on stderr,
// when it cannot be used.
func loadConfig(path string, stderr io.Writer) (cfg config.Config, ok bool) {
	cfg, err := config.Check(path, false)
	if err != nil {
		fmt.Fprintf(stderr, "anima: %s\n", err)
		return cfg, false
	}
	return cfg, true
}

// versionCommand is `anima version`: it prints the version; --help says so instead.
func versionCommand(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprintf(stdout, "anima %s\n", bot.Version)
		return 0
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		fmt.Fprint(stdout, "Usage: anima version\n\nPrints the version of this anima (git describe when it was built) and exits.\n")
		return 0
	default:
		fmt.Fprintf(stderr, "anima version: takes no arguments or flags, not %q\n", args)
		return 2
	}
}
