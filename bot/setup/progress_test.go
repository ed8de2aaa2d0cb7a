package setup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestZoneAskedAgain: three unknown zones ended init with exit 1, and the token,
// endpoint and models already checked were gone (issue 36). Each unknown zone is
// refused with the zones it may have meant, the first of them the next question's
// default, and init asks until it has one: "berlin" four times, then Enter, writes
// Europe/Berlin.
func TestZoneAskedAgain(t *testing.T) {
	t.Parallel()
	_, _, opt := withFakes(t)
	opt.UserID, opt.Out = owner, filepath.Join(t.TempDir(), "c.yaml")
	var out bytes.Buffer
	cfg, err := Run(testCtx(t), opt, strings.NewReader("berlin\nMars/Olympus\nberlin\nberlin\n\n"), &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if cfg.User.Timezone != "Europe/Berlin" {
		t.Errorf("zone %q, want Europe/Berlin", cfg.User.Timezone)
	}
	for _, want := range []string{
		`"berlin" is not a time zone anima knows. Did you mean Europe/Berlin?`,
		`"Mars/Olympus" is not a time zone anima knows.` + "\n",
		"Your time zone (IANA name, e.g. Europe/Berlin) [Europe/Berlin]: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "Your time zone"); n != 5 {
		t.Errorf("asked for the zone %d times, want 5:\n%s", n, out.String())
	}
	if _, err := os.Stat(ProgressFile(opt.Out)); !os.IsNotExist(err) {
		t.Errorf("the progress file is left after the configuration was written: %v", err)
	}

	// With --yes there is nobody to ask: the error says what was meant.
	opt.Yes, opt.Timezone, opt.Out = true, "berlin", filepath.Join(t.TempDir(), "c.yaml")
	if _, err := Run(testCtx(t), opt, strings.NewReader(""), &out); err == nil || !strings.Contains(err.Error(), "Did you mean Europe/Berlin?") {
		t.Errorf("--yes with an unknown zone: %v, want the did-you-mean", err)
	}
}

// TestResume: a run stopped midway kept what it had checked in a 0600 file beside the
// configuration; the next run offers it and asks only what is left, checking the rest
// again without asking. Stopped by the end of the input (after the models), by Ctrl-C
// (during the wait for the owner's code) and by a model refused three times; declined,
// everything is asked again.
func TestResume(t *testing.T) {
	t.Parallel()
	const key = "sk-good"
	for _, tc := range []struct {
		name    string
		first   string // stdin of the run that stops
		models  []string
		ctrlC   bool   // the first run is interrupted while it waits for the code
		second  string // stdin of the run that resumes
		asked   []string
		unasked []string
		zone    string
	}{
		{name: "input ended", first: telegramtest.DefaultToken + "\n%AI%\n" + key + "\nm1\n\n",
			second: "\nEurope/Berlin\n", zone: "Europe/Berlin",
			asked:   []string{"Resume where you stopped? [Y/n]", "Your time zone"},
			unasked: []string{"Telegram bot token", "Model endpoint", "API key", "Fast model", "Smart model"}},
		{name: "ctrl-c while waiting for the code", ctrlC: true,
			first:  telegramtest.DefaultToken + "\n%AI%\n" + key + "\nm1\n\nAsia/Tokyo\n",
			second: "y\n", zone: "Asia/Tokyo",
			asked:   []string{"Resume where you stopped? [Y/n]"},
			unasked: []string{"Telegram bot token", "Model endpoint", "API key", "Fast model", "Your time zone"}},
		{name: "model refused three times", first: telegramtest.DefaultToken + "\n%AI%\n" + key + "\nx\nx\ny\ny\nz\nz\n",
			second: "\nm1\n\nUTC\n", zone: "UTC",
			asked:   []string{"Resume where you stopped? [Y/n]", "Fast model", "Smart model", "Your time zone"},
			unasked: []string{"Telegram bot token", "Model endpoint", "API key"}},
		{name: "declined", first: telegramtest.DefaultToken + "\n",
			second: "n\n" + telegramtest.DefaultToken + "\n%AI%\n" + key + "\nm1\n\nUTC\n", zone: "UTC",
			asked: []string{"Resume where you stopped? [Y/n]", "Starting afresh.", "Telegram bot token", "Model endpoint", "API key", "Fast model"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := telegramtest.New(t)
			ai := openaitest.New(t)
			ai.SetModels("m1")
			ai.SetKey(key)
			opt := Options{APIURL: tg.URL, Out: filepath.Join(t.TempDir(), "c.yaml")}
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			first := opt
			if tc.ctrlC {
				tg.PushText(stranger, stranger, "hi") // pending: init pauses between polls, and is interrupted there
				first.Sleep = func(context.Context, time.Duration) error {
					cancel()
					return context.Canceled
				}
			} else {
				first.UserID = owner
			}
			var out bytes.Buffer
			stdin := strings.ReplaceAll(tc.first, "%AI%", ai.URL())
			_, err := Run(ctx, first, strings.NewReader(stdin), &out)
			if err == nil || !strings.Contains(err.Error(), "what was checked is kept in "+ProgressFile(opt.Out)+": run anima init again to resume") {
				t.Fatalf("first Run = %v, want it stopped, naming the progress file\n%s", err, out.String())
			}
			if tc.ctrlC && !errors.Is(err, context.Canceled) {
				t.Errorf("first Run = %v, want context.Canceled", err)
			}
			st, err := os.Stat(ProgressFile(opt.Out))
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("progress file %v (%v), want mode 0600", st, err)
			}
			if _, err := os.Stat(opt.Out); !os.IsNotExist(err) {
				t.Errorf("a configuration was written by the run that stopped")
			}

			second := opt
			second.UserID = owner
			out.Reset()
			if _, err := Run(testCtx(t), second, strings.NewReader(strings.ReplaceAll(tc.second, "%AI%", ai.URL())), &out); err != nil {
				t.Fatalf("second Run: %v\n%s", err, out.String())
			}
			for _, want := range tc.asked {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the resumed run does not ask %q:\n%s", want, out.String())
				}
			}
			for _, not := range tc.unasked {
				if strings.Contains(out.String(), not) {
					t.Errorf("the resumed run asks %q again:\n%s", not, out.String())
				}
			}
			if strings.Contains(out.String(), key) || strings.Contains(out.String(), telegramtest.DefaultToken) {
				t.Errorf("output shows a secret:\n%s", out.String())
			}
			cfg, err := config.Check(opt.Out, true)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Telegram.Token.Reveal() != telegramtest.DefaultToken || cfg.LLM.APIKey.Reveal() != key ||
				cfg.LLM.FastModel != "m1" || cfg.User.Timezone != tc.zone {
				t.Errorf("written config: token ok %t, key ok %t, model %q, zone %q", cfg.Telegram.Token.Reveal() == telegramtest.DefaultToken,
					cfg.LLM.APIKey.Reveal() == key, cfg.LLM.FastModel, cfg.User.Timezone)
			}
			if _, err := os.Stat(ProgressFile(opt.Out)); !os.IsNotExist(err) {
				t.Errorf("the progress file is left after the configuration was written: %v", err)
			}
		})
	}
}
