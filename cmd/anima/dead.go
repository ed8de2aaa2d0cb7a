package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/brain"
)

const deadUsage = `Usage:
  anima dead list     [FILE]   list the dead letters (failed work kept for 7 days)
  anima dead show ID  [FILE]   show one whole (control characters shown escaped)
  anima dead retry ID [FILE]   retry it: a refused message is sent again (the parts
                               never delivered), a failed or expired run runs again;
                               refused for a user no longer in telegram.allowed_users
FILE is the configuration, also --config FILE; without either:
` + configRule + ".\n"

// parseDead parses `anima dead list|show ID|retry ID [FILE]` and returns the command:
// it works through the running service's control socket, or on the store itself when
// the service is stopped (a retried letter then waits for its next start). Exit codes: 0
// done, 1 failed (an unknown id too), 2 usage.
func parseDead(args []string, stdout, stderr io.Writer) (do func(context.Context) int, code int, ok bool) {
	fs := flag.NewFlagSet("anima dead", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	cfgPath := fs.String("config", defaultConfig(), "configuration `FILE`, also given as the last argument; without either: "+configRule)
	// Flags may come before, between or after the words.
	words, _, err := interleave(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, deadUsage)
		return nil, 0, false
	}
	if err != nil {
		fmt.Fprint(stderr, deadUsage)
		return nil, 2, false
	}
	// The configuration may come as the last word: anima dead list my.yaml.
	if n := len(words); n > 0 && (n == 2 && words[0] == "list" || n == 3 && words[0] != "list") {
		if flagSet(fs, "config") {
			fmt.Fprintln(stderr, "anima dead: two configuration files: give FILE or --config, not both")
			return nil, 2, false
		}
		*cfgPath, words = words[n-1], words[:n-1]
	}
	req := ""
	switch {
	case len(words) == 1 && words[0] == "list":
		req = "list"
	case len(words) == 2 && (words[0] == "show" || words[0] == "retry"):
		if _, err := strconv.ParseUint(words[1], 10, 64); err != nil {
			fmt.Fprintf(stderr, "anima dead %s: ID must be a dead letter's number, not %q\n", words[0], words[1])
			return nil, 2, false
		}
		req = words[0] + " " + words[1]
	default:
		fmt.Fprintf(stderr, "anima dead: want list, show ID or retry ID, then FILE (optional), not %q\n", words)
		fmt.Fprint(stderr, deadUsage)
		return nil, 2, false
	}
	return func(ctx context.Context) int { return deadCommand(ctx, *cfgPath, words, req, stdout, stderr) }, 0, true
}

// deadCommand is `anima dead` parsed: words are list, show ID or retry ID, req the
// request for bot.Dead.
func deadCommand(ctx context.Context, cfgPath string, words []string, req string, stdout, stderr io.Writer) int {
	cfg, ok := loadConfig(cfgPath, stderr)
	if !ok {
		return 1
	}
	if words[0] == "retry" {
		// The running service checks its own configuration too; a stopped one cannot.
		letters, err := bot.Dead(ctx, cfg.Storage.Path, "show "+words[1])
		if err == nil {
			err = bot.MayRetry(letters[0], cfg.Telegram)
		}
		if err != nil {
			fmt.Fprintf(stderr, "anima dead: %s\n", err)
			return 1
		}
	}
	letters, err := bot.Dead(ctx, cfg.Storage.Path, req)
	if err != nil {
		fmt.Fprintf(stderr, "anima dead: %s\n", err)
		return 1
	}
	switch words[0] {
	case "list":
		printDeadList(stdout, letters)
	case "show":
		printDeadLetter(stdout, letters[0])
	case "retry":
		d := letters[0]
		what := "its message is back in the outbox"
		if d.Message != nil && d.Message.SkipParts > 0 {
			what = fmt.Sprintf("its message is back in the outbox, to be sent from part %d (the parts before were delivered)", d.Message.SkipParts+1)
		}
		if d.Message == nil {
			what = fmt.Sprintf("its %d signals are back in the inbox for a new run", len(d.Signals))
		}
		fmt.Fprintf(stdout, "retried dead letter %d (%s, chat %d): %s\n", d.ID, d.Kind, d.Chat, what)
	}
	return 0
}

// printDeadList prints one line per dead letter, oldest first.
func printDeadList(w io.Writer, letters []brain.DeadLetter) {
	if len(letters) == 0 {
		fmt.Fprintln(w, "no dead letters")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tCHAT\tUSER\tAT\tREASON")
	for _, d := range letters {
		reason := d.Reason
		if r := []rune(reason); len(r) > 80 {
			reason = string(r[:79]) + "…"
		}
		reason = brain.Printable(reason)
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\n", d.ID, d.Kind, d.Chat, d.User, d.At.UTC().Format(time.RFC3339), reason)
	}
	_ = tw.Flush()
}

// printDeadLetter prints d whole, one field a line, every text escaped for a terminal
// (printable): a message Telegram refused or a user's words may carry escape sequences.
func printDeadLetter(w io.Writer, d brain.DeadLetter) {
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-8s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	line("id", "%d", d.ID)
	line("kind", "%s", brain.Printable(string(d.Kind)))
	line("chat", "%d", d.Chat)
	line("user", "%d", d.User)
	line("at", "%s", d.At.UTC().Format(time.RFC3339))
	line("reason", "%s", brain.Printable(d.Reason))
	if m := d.Message; m != nil {
		what := brain.Printable(string(m.Kind))
		if m.SkipParts > 0 {
			what += fmt.Sprintf(", %d parts delivered before the refusal (a retry sends the rest)", m.SkipParts)
		}
		line("message", "%s", what)
		line("text", "%s", brain.Printable(m.Text))
	}
	for _, s := range d.Signals {
		from := ""
		if s.User != 0 {
			from = fmt.Sprintf(" from user %d", s.User)
			if s.UserName != "" {
				from += " (" + brain.Printable(s.UserName) + ")"
			}
		}
		line("signal", "%s%s at %s", brain.Printable(string(s.Type)), from, s.At.UTC().Format(time.RFC3339))
		if s.Text != "" {
			line("text", "%s", brain.Printable(s.Text))
		}
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
