// Package setup is `anima init`: it asks for the bot token, the model endpoint and the
// owner's Telegram user, checks each against the real services (getMe, the models list
// or a one-token chat call, getUpdates), and writes a commented configuration. Every
// answer can come from Options instead, so scripts run it without a terminal.
package setup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
)

// Options are the answers given up front (flags); an empty one is asked for, unless Yes
// is set, when it takes its default or, with none, is an error.
type Options struct {
	Token      string // Bot API token
	APIURL     string // Bot API base URL; "" is Telegram's
	LLMBaseURL string // OpenAI-compatible endpoint; "" asks, default OpenAI's
	LLMKey     string // key for LLMBaseURL
	FastModel  string
	SmartModel string
	Timezone   string // IANA zone; "" asks, default UTC
	UserID     int64  // the owner's Telegram user id; 0 waits for the one-time code (owner.go)
	Out        string // configuration file to write
	Force      bool   // overwrite Out
	Yes        bool   // ask nothing: take defaults (the owner still sends the code, unless UserID)
	Wait       time.Duration
	// Start is the command line that starts anima with Out, printed at the end; "" prints
	// "anima run Out". cmd/anima gives the one that works the way init was started.
	Start string
	// PollEvery is the pause between two short getUpdates polls while older updates are
	// pending (they cannot be waited on without confirming them); 0 means 1 s.
	PollEvery time.Duration
	// Sleep waits d or until ctx ends; nil uses a timer. Tests pass one that does not wait.
	Sleep func(ctx context.Context, d time.Duration) error
}

// ErrExists is returned when Options.Out exists and Force is not set.
var ErrExists = errors.New("the configuration file exists: give --force to overwrite it, or --out another file")

// session is one run of the dialogue.
type session struct {
	opt Options
	in  *bufio.Reader
	out io.Writer
	// tty is stdin's descriptor when stdin is a terminal, else -1: secrets are then read
	// with echo off (askSecret).
	tty int
	// prog is what this run has checked, kept at progPath (progress.go).
	prog     progress
	progPath string
}

// Run asks, checks and writes; it returns the configuration written. Its errors say
// what to do; they never show a secret.
func Run(ctx context.Context, opt Options, in io.Reader, out io.Writer) (config.Config, error) {
	if opt.Out == "" {
		opt.Out = "anima.yaml"
	}
	if opt.Wait <= 0 {
		opt.Wait = 5 * time.Minute
	}
	if opt.PollEvery <= 0 {
		opt.PollEvery = time.Second
	}
	if opt.Sleep == nil {
		opt.Sleep = brain.Sleep
	}
	if _, err := os.Stat(opt.Out); err == nil && !opt.Force {
		return config.Config{}, fmt.Errorf("%s: %w", opt.Out, ErrExists)
	}
	s := &session{opt: opt, in: bufio.NewReader(in), out: out, tty: terminal(in), progPath: ProgressFile(opt.Out)}
	cfg, err := s.run(ctx)
	if err != nil {
		if _, serr := os.Stat(s.progPath); serr == nil {
			err = fmt.Errorf("%w\n(what was checked is kept in %s: run anima init again to resume)", err, s.progPath)
		}
		return cfg, err
	}
	if err := os.Remove(s.progPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(out, "  (Could not remove %s, which holds the token and key as %s does: remove it yourself: %s.)\n", s.progPath, opt.Out, err)
	}
	start := opt.Start
	if start == "" {
		start = "anima run " + opt.Out
	}
	fmt.Fprintf(out, "\nWrote %s (mode 0600: it holds the token and key). Start anima with:\n\n    %s\n\n", opt.Out, start)
	return cfg, nil
}

// run takes the steps in order, keeping what each has checked (keep), and writes the
// configuration.
func (s *session) run(ctx context.Context) (config.Config, error) {
	cfg := config.Default()
	if err := s.resume(); err != nil {
		return cfg, err
	}
	if s.opt.APIURL != "" {
		cfg.Telegram.APIURL = strings.TrimRight(s.opt.APIURL, "/")
	}
	me, err := s.telegram(ctx, &cfg)
	if err != nil {
		return cfg, err
	}
	s.keep(func(p *progress) {
		p.APIURL, p.Token, p.Bot = cfg.Telegram.APIURL, cfg.Telegram.Token.Reveal(), me.Username
	})
	if err := s.model(ctx, &cfg); err != nil {
		return cfg, err
	}
	s.keep(func(p *progress) { p.FastModel, p.SmartModel = cfg.LLM.FastModel, cfg.LLM.SmartModel }) // the endpoint is kept once it answers (model)
	if err := s.timezone(&cfg); err != nil {
		return cfg, err
	}
	s.keep(func(p *progress) { p.Timezone = cfg.User.Timezone })
	if err := s.owner(ctx, &cfg, me); err != nil {
		return cfg, err
	}
	if err := write(s.opt.Out, cfg, s.opt.Force); err != nil {
		return cfg, err
	}
	if _, err := config.Check(s.opt.Out, true); err != nil {
		return cfg, fmt.Errorf("the configuration written does not pass `anima check` (a bug in anima init): %w", err)
	}
	return cfg, nil
}

// ask prints question (with its default in brackets, if any) and returns the answer, or
// def for an empty one. With Yes it asks nothing and returns def, or an error naming
// flag when there is no default.
func (s *session) ask(question, def, flag string) (string, error) {
	if s.opt.Yes {
		if def == "" && flag != "" {
			return "", fmt.Errorf("%s is required with --yes", flag)
		}
		return def, nil
	}
	if def != "" {
		fmt.Fprintf(s.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(s.out, "%s: ", question)
	}
	return s.answer(question, def, "give "+flag+", or --yes for the defaults")
}

// askSecret asks for a secret (the token, the key) that has no default: name says what
// it is, env the variable that gives it, flag the flag that does too but shows it in ps.
// On a terminal what is typed is not shown; from a pipe or file it is read as a line,
// like ask. With Yes it is an error naming env.
func (s *session) askSecret(question, name, env, flag string) (string, error) {
	if s.opt.Yes {
		return "", fmt.Errorf("the %s is required with --yes: set %s (%s works too, but puts it in the command line, "+
			"which every user of this machine can read with ps)", name, env, flag)
	}
	if s.tty < 0 {
		fmt.Fprintf(s.out, "%s: ", question)
		return s.answer(question, "", "set "+env+", or give it on standard input")
	}
	fmt.Fprintf(s.out, "%s (not shown as you type): ", question)
	b, err := term.ReadPassword(s.tty)
	fmt.Fprintln(s.out)
	if err != nil {
		return "", fmt.Errorf("read answer: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// answer reads the line answering question, or def for an empty one; hint says how else
// to give it, when the input ends first.
func (s *session) answer(question, def, hint string) (string, error) {
	line, err := s.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("input ended before %q was answered (%s)", question, hint)
		}
		return "", fmt.Errorf("read answer: %w", err)
	}
	if v := strings.TrimSpace(line); v != "" {
		return v, nil
	}
	return def, nil
}

// terminal returns in's file descriptor when in is a terminal, else -1.
func terminal(in io.Reader) int {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return -1
	}
	return int(f.Fd())
}

// retry reports whether a refused answer may be asked again: only in a dialogue, and at
// most three times.
func (s *session) retry(attempt int) bool { return !s.opt.Yes && attempt < 3 }

// timezone asks for the user's zone until it is one anima knows, each time with the
// zones the answer may have meant (config.SuggestZones), the first of them the default
// an empty answer takes. With Yes, an unknown zone is an error that says them.
func (s *session) timezone(cfg *config.Config) error {
	tz, def := s.opt.Timezone, "UTC"
	for {
		if tz == "" {
			var err error
			if tz, err = s.ask("Your time zone (IANA name, e.g. Europe/Berlin)", def, "--timezone"); err != nil {
				return err
			}
		}
		if _, err := time.LoadLocation(tz); err == nil && tz != "" && tz != "Local" {
			cfg.User.Timezone = tz
			return nil
		}
		meant := config.SuggestZones(tz)
		didYouMean := ""
		if len(meant) > 0 {
			didYouMean = " Did you mean " + strings.Join(meant, " or ") + "?"
		}
		if s.opt.Yes {
			return fmt.Errorf("unknown time zone %q: use an IANA name such as Europe/Berlin or UTC.%s", tz, didYouMean)
		}
		fmt.Fprintf(s.out, "  %q is not a time zone anima knows.%s\n", tz, didYouMean)
		if len(meant) > 0 {
			def = meant[0]
		}
		tz = ""
	}
}
