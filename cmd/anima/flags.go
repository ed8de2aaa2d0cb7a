package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/bot/setup"
)

// synopsis is each configured command's usage line, shown by its --help and on a flag error.
var synopsis = map[string]string{
	"run":     "anima run [FILE]             serve Telegram",
	"chat":    "anima chat [FILE]            talk to anima on this console (its own store: chat.db beside storage.path; no metrics server unless --metrics)",
	"check":   "anima check [FILE]           exit 0 only if `anima run` would start with FILE: every problem at once, the token and model asked unless --offline",
	"backup":  "anima backup [FILE] --out F  copy the store while the service runs",
	"compact": "anima compact [FILE]         rewrite the stopped service's store without deleted data",
	"health":  "anima health [FILE]          exit 0 if the running instance's /readyz answers 200",
	"sim":     "anima sim [FILE] [--days N | --scenario S --out DIR [--live [--yes]]]  replay days under a simulated clock",

	// install.go
	"install":   "anima install [FILE]         put anima in service under systemd from init's file (as root the system unit, else a user unit), start it and check it with anima health",
	"uninstall": "anima uninstall              stop and disable the service, remove the unit and binary anima install put in place; the configuration and store stay",
}

// cmdFlags are the flags of one configured command; a flag the command does not take
// is not defined for it (so giving it is an error) and reads as its zero value here.
type cmdFlags struct {
	cmd    string
	fs     *flag.FlagSet
	stderr io.Writer
	args   []string // the flags as given, without the configuration file

	config, out, scenario, cpuProfile, memProfile, store *string
	days                                                 *int
	timeout                                              *time.Duration
	metrics, offline                                     *bool
}

func newFlags(cmd string, stderr io.Writer) *cmdFlags {
	fs := flag.NewFlagSet("anima "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	f := &cmdFlags{cmd: cmd, fs: fs, stderr: stderr,
		out: new(string), scenario: new(string), cpuProfile: new(string), memProfile: new(string),
		store: new(string), days: new(int), timeout: new(time.Duration), metrics: new(bool), offline: new(bool)}
	f.config = fs.String("config", defaultConfig(), "configuration file, also given as the argument `FILE`; without either: "+configRule)
	switch cmd {
	case "run", "chat":
		// Profiling (not in the usage text, see docs/profiling.md).
		f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
		f.memProfile = fs.String("memprofile", "", "write a heap profile to this file on exit")
		if cmd == "chat" {
			f.store = fs.String("store", "", "bbolt file for this conversation (default: chat.db beside storage.path; give storage.path to talk with the service's memory while it is stopped)")
			f.metrics = fs.Bool("metrics", false, "serve /metrics, /healthz and /readyz at metrics.listen as anima run does (off: a running service holds that address)")
		}
	case "check":
		f.offline = fs.Bool("offline", false, "do not ask Telegram (getMe) and the model endpoint (the models list, or a one-token request) whether the token, key and models work")
	case "backup":
		f.out = fs.String("out", "", "file to write the copy to (required)")
	case "health":
		f.timeout = fs.Duration("timeout", 3*time.Second, "how long to wait for /readyz")
	case "sim":
		f.days = fs.Int("days", 7, "days to simulate (with --scenario: overrides its days)")
		f.scenario = fs.String("scenario", "", "scripted user scenario (YAML)")
		f.out = fs.String("out", "", "directory for the timeline (with --scenario)")
		simLiveFlags(fs)
	}
	return f
}

// parse parses args, flags before, between or after FILE. It returns ok false with the
// exit code when the command is done: 0 after --help (printed to stdout), 2 after a usage
// error (said on stderr with what to do instead, and the usage).
func (f *cmdFlags) parse(args []string, stdout io.Writer) (code int, ok bool) {
	rest, given, err := interleave(f.fs, args)
	if errors.Is(err, flag.ErrHelp) {
		f.usage(stdout)
		return 0, false
	}
	if err != nil {
		f.usage(f.stderr) // the flag package has said what is wrong
		return 2, false
	}
	f.args = given
	switch len(rest) {
	case 0:
	case 1:
		if flagSet(f.fs, "config") && *f.config != rest[0] {
			fmt.Fprintf(f.stderr, "anima %s: two configuration files, --config %s and %s: give one\n", f.cmd, *f.config, rest[0])
			return 2, false
		}
		*f.config = rest[0]
	default:
		use, _, _ := strings.Cut(synopsis[f.cmd], "  ")
		fmt.Fprintf(f.stderr, "anima %s: one configuration file, not %d arguments: %q; every other argument is a flag, "+
			"before or after FILE (%s); `anima %s --help` lists them\n", f.cmd, len(rest), rest, strings.TrimSpace(use), f.cmd)
		return 2, false
	}
	return 0, true
}

// interleave parses args into fs with flags before, between or after the other
// arguments, which it returns in order (rest), with the flags as given (given); after
// "--" every argument is one of rest.
func interleave(fs *flag.FlagSet, args []string) (rest, given []string, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		n := len(args) - fs.NArg()
		consumed := args[:n]
		if n > 0 && consumed[n-1] == "--" {
			return append(rest, fs.Args()...), append(given, consumed[:n-1]...), nil
		}
		given = append(given, consumed...)
		if fs.NArg() == 0 {
			return rest, given, nil
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
}

// parseInterleaved parses args into fs with flags before, between or after the files,
// and returns the files.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	files, _, err := interleave(fs, args)
	return files, err
}

func (f *cmdFlags) usage(w io.Writer) {
	use, what, _ := strings.Cut(synopsis[f.cmd], "  ")
	fmt.Fprintf(w, "Usage: %s\n\n%s.\n\nFlags:\n", use, strings.TrimSpace(what))
	f.fs.SetOutput(w)
	f.fs.PrintDefaults()
	f.fs.SetOutput(f.stderr)
}

// simArgs are the arguments for anima-sim: the configuration file as a flag, then the
// flags as given.
func (f *cmdFlags) simArgs() []string {
	return append([]string{"--config", *f.config}, f.args...)
}

// exampleUserWarning is what check and run say when telegram.allowed_users still holds
// the example id of config.yaml.
var exampleUserWarning = fmt.Sprintf("telegram.allowed_users still holds the example id %d, so anima answers "+
	"nobody but that id: run `anima init`, or write to the bot and read your user_id in the "+
	"\"telegram message from a stranger ignored\" warning of `anima run`", config.ExampleUserID)

// check is `anima check`: it exits 0 only when `anima run` would start with the file,
// after reporting every problem it finds: the file's keys, what run needs, the store
// path and listen addresses, and, unless offline, the token (getMe) and the model
// endpoint with its key and models, as init checks them.
func check(ctx context.Context, path string, offline bool, stdout, stderr io.Writer) int {
	cfg, err := config.Inspect(path)
	var problems []error
	if err != nil {
		problems = append(problems, err)
		if !keyErrorsOnly(err) {
			fmt.Fprintf(stderr, "anima: %s\n", prefixPath(path, err))
			return 1 // the file cannot be read or decoded: nothing more to look at
		}
	}
	wrong := func(key string) bool { return badKey(err, key) }
	if w := cfg.ResolveStore(path); w != "" {
		fmt.Fprintf(stderr, "anima: warning: %s: %s\n", path, w)
	}
	notes, perr := bot.Preflight(cfg, false)
	for _, e := range unwrapJoined(perr) {
		var ke *config.KeyError
		if !errors.As(e, &ke) || !wrong(ke.Key) { // a key already found wrong is said once
			problems = append(problems, e)
		}
	}
	if !offline {
		if err := setup.Check(ctx, cfg, wrong); err != nil {
			problems = append(problems, err)
		}
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "anima: note: %s\n", n)
	}
	if cfg.Telegram.HasExampleUser() {
		fmt.Fprintf(stderr, "anima: warning: %s: %s\n", path, exampleUserWarning)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "anima: %s\n", prefixPath(path, errors.Join(problems...)))
		return 1
	}
	how := "asked Telegram and the model endpoint"
	if offline {
		how = "offline: Telegram and the model endpoint not asked"
	}
	fmt.Fprintf(stdout, "%s: valid (%s)\n", path, how)
	return 0
}

// unwrapJoined returns the errors joined in err, or err alone.
func unwrapJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unwrapJoined(e)...)
		}
		return out
	}
	return []error{err}
}

// keyErrorsOnly reports whether every error joined in err is a *config.KeyError: the file
// decoded, and what is wrong is in its values.
func keyErrorsOnly(err error) bool {
	for _, e := range unwrapJoined(err) {
		var ke *config.KeyError
		if !errors.As(e, &ke) {
			return false
		}
	}
	return true
}

// badKey reports whether err names key, or the section holding it, as wrong.
func badKey(err error, key string) bool {
	for _, e := range unwrapJoined(err) {
		var ke *config.KeyError
		if errors.As(e, &ke) && (ke.Key == "" || ke.Key == key || strings.HasPrefix(key, ke.Key+".")) {
			return true
		}
	}
	return false
}

// prefixPath puts path before each of the problems joined in err, as Load does.
func prefixPath(path string, err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(l, path+": ") {
			l = path + ": " + l
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\nanima: ")
}

// chatStore is the store `anima chat` uses: flag when given, else chat.db beside the
// service's store, so a console conversation never writes into the service's memory.
func chatStore(servicePath, flag string) string {
	if flag != "" {
		return flag
	}
	return filepath.Join(filepath.Dir(servicePath), "chat.db")
}
