package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/bot/setup"
)

// initCommand is `anima init`: flags become setup.Options; anything not given is asked.
func initCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("anima init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	var o setup.Options
	var model string
	fs.StringVar(&o.Out, "out", initOut(), "configuration file to write ($ANIMA_CONFIG when set)")
	fs.BoolVar(&o.Force, "force", false, "overwrite the file if it exists")
	fs.BoolVar(&o.Yes, "yes", false, "ask nothing: take the defaults (without --user-id it still waits for you to send the bot the one-time code it prints)")
	fs.StringVar(&o.Token, "token", "", "Telegram bot token from @BotFather (default: $ANIMA_TELEGRAM_TOKEN, else asked, not shown as you type); "+
		"prefer those: every user of this machine can read a command line with ps")
	fs.StringVar(&o.APIURL, "api-url", "", "Telegram Bot API base URL (default https://api.telegram.org)")
	fs.StringVar(&o.LLMBaseURL, "llm-base-url", "", "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama (default https://api.openai.com/v1)")
	fs.StringVar(&o.LLMKey, "llm-key", "", "API key for the endpoint (default: $ANIMA_LLM_API_KEY, else asked unless the endpoint is on this machine); "+
		"prefer those: every user of this machine can read a command line with ps")
	fs.StringVar(&model, "model", "", "model for both fast and smart turns (default: asked; gpt-4o-mini)")
	fs.StringVar(&o.FastModel, "fast-model", "", "model for everyday turns (overrides --model)")
	fs.StringVar(&o.SmartModel, "smart-model", "", "model used when the fast one is unsure (overrides --model)")
	fs.StringVar(&o.Timezone, "timezone", "", "your IANA time zone (default: asked; UTC)")
	fs.Int64Var(&o.UserID, "user-id", 0, "your Telegram user id: skips waiting for the one-time code")
	fs.DurationVar(&o.Wait, "wait", 5*time.Minute, "how long to wait for the one-time code to reach the bot")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, "Usage: anima init [flags]   ask for and check the bot token, the model endpoint and your Telegram user; write a config\n\nFlags:\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	case err != nil:
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "anima init: unexpected arguments %q (the file to write is --out FILE)\n", fs.Args())
		return 2
	}
	if o.FastModel == "" {
		o.FastModel = model
	}
	if o.SmartModel == "" {
		o.SmartModel = model
	}
	// Already set up: `anima init && anima run` starts anima on every run, not only the
	// first. A file that exists but would not run is an error, as before.
	if _, err := os.Stat(o.Out); err == nil && !o.Force {
		if _, err := config.Check(o.Out, true); err != nil {
			fmt.Fprintf(stderr, "anima init: %s exists but would not run (%s); fix it, or give --force to write it again\n", o.Out, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s is already written and valid; `%s init --force` asks again. Start anima with:\n\n    %s\n\n", o.Out, self(), startCommand(o.Out))
		return 0
	}
	o.Start = startCommand(o.Out)
	secretFrom(&o.Token, "token", "the bot token", "ANIMA_TELEGRAM_TOKEN", stdout, stderr)
	secretFrom(&o.LLMKey, "llm-key", "the API key", "ANIMA_LLM_API_KEY", stdout, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := setup.Run(ctx, o, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "anima init: %s\n", err)
		return 1
	}
	return 0
}

// secretFrom fills *v, a secret flag's value, from env when the flag was not given, and
// says where the secret came from: from env on stdout, from the command line on stderr
// with a warning, as every user of this machine can read a command line (ps,
// /proc/PID/cmdline) for as long as init waits for the owner's code, and the shell keeps
// it in its history. The environment is readable only by the same user.
func secretFrom(v *string, flag, name, env string, stdout, stderr io.Writer) {
	switch {
	case *v != "":
		fmt.Fprintf(stderr, "anima init: warning: --%s puts %s in the command line, where every user of this machine can read it "+
			"(ps) while init runs, and in your shell's history: set %s instead, or leave --%s out to be asked for it\n", flag, name, env, flag)
	case os.Getenv(env) != "":
		*v = os.Getenv(env)
		fmt.Fprintf(stdout, "Taking %s from $%s.\n", name, env)
	}
}
