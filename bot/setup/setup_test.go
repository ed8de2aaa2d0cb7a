package setup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

const (
	owner    = 4242
	stranger = 777
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	return braintest.Within(t, 20*time.Second)
}

// withFakes starts the fakes init talks to, a Bot API and an endpoint that lists m1, and
// the Options that reach them with the token given and m1 as both models.
func withFakes(t *testing.T) (*telegramtest.Server, *openaitest.Server, Options) {
	t.Helper()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("m1")
	return tg, ai, Options{Token: telegramtest.DefaultToken, APIURL: tg.URL, LLMBaseURL: ai.URL(), FastModel: "m1", SmartModel: "m1"}
}

// TestDialogue runs anima init as a person would, answering on stdin, wrong token and
// key first: it checks each answer against the fakes, waits for the owner's message
// carrying the one-time code without confirming any update (an older update from
// someone else stays pending, and so does the owner's), and writes a 0600 configuration
// that `anima run` accepts.
func TestDialogue(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("llama3.2", "qwen2.5:7b", "qwen2.5:32b")
	ai.SetKey("sk-good")
	old := tg.PushText(stranger, stranger, "an old message from someone else")

	var ownerMsg int64
	sleeps := 0
	var out bytes.Buffer // read by Sleep, which Run calls on its own goroutine
	opt := Options{
		APIURL: tg.URL,
		Out:    filepath.Join(t.TempDir(), "anima", "config.yaml"),
		// The owner writes while init pauses between two short polls.
		Sleep: func(ctx context.Context, _ time.Duration) error {
			if sleeps++; sleeps == 1 {
				ownerMsg = tg.PushText(owner, owner, "/start "+printedCode(t, out.String()))
			}
			return ctx.Err()
		},
	}
	stdin := strings.Join([]string{
		"123:" + strings.Repeat("w", 35), // refused
		telegramtest.DefaultToken,
		ai.URL(),
		"sk-bad", // refused
		"sk-good",
		"qwen2.5:7b",
		"", // smart: the fast model by default
		"Mars/Olympus", "Europe/Berlin",
	}, "\n") + "\n"
	cfg, err := Run(testCtx(t), opt, strings.NewReader(stdin), &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"Telegram refused this token", "@anima_bot (bot id 123456)", "refused the key",
		"lists 3 models", "send @anima_bot", "https://t.me/anima_bot?start=", "came from user id 4242", "anima run " + opt.Out} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "sk-good") || strings.Contains(out.String(), "TEST-fake-token") {
		t.Errorf("output shows a secret:\n%s", out.String())
	}

	st, err := os.Stat(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	got, err := config.Check(opt.Out, true)
	if err != nil {
		t.Fatalf("written config: %v", err)
	}
	if !slices.Equal(got.Telegram.AllowedUsers, []int64{owner}) || got.Telegram.Token.Reveal() != telegramtest.DefaultToken ||
		got.Telegram.APIURL != tg.URL || got.LLM.BaseURL != ai.URL() || got.LLM.APIKey.Reveal() != "sk-good" ||
		got.LLM.FastModel != "qwen2.5:7b" || got.LLM.SmartModel != "qwen2.5:7b" || got.User.Timezone != "Europe/Berlin" {
		t.Errorf("written config %+v", got)
	}
	if !slices.Equal(cfg.Telegram.AllowedUsers, got.Telegram.AllowedUsers) {
		t.Errorf("Run returned users %v, file has %v", cfg.Telegram.AllowedUsers, got.Telegram.AllowedUsers)
	}
	// Nothing confirmed: both updates wait for `anima run`.
	if p := tg.Pending(); !slices.Contains(p, old) || !slices.Contains(p, ownerMsg) {
		t.Errorf("pending updates %v, want %d and %d still there", p, old, ownerMsg)
	}
	for _, p := range tg.Polls() {
		if p.Offset != 0 {
			t.Errorf("getUpdates with offset %d confirms updates", p.Offset)
		}
	}
	for _, c := range tg.CallsTo("getUpdates") {
		if v := c.Params["allowed_updates"]; v != "" {
			t.Errorf("getUpdates with allowed_updates %s changes the bot's setting for anima run", v)
		}
	}

	// A second run refuses to overwrite, before asking anything.
	_, err = Run(testCtx(t), opt, strings.NewReader(""), &out)
	if !errors.Is(err, ErrExists) {
		t.Errorf("second Run: %v, want ErrExists", err)
	}
}

// TestScripted: every answer from Options (--yes); the endpoint has no models list, so a
// one-token chat call checks each model; --user-id skips the wait; --force replaces.
func TestScripted(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := Options{Token: telegramtest.DefaultToken, APIURL: tg.URL, LLMBaseURL: ai.URL(), FastModel: "small", SmartModel: "large",
		UserID: owner, Out: path, Force: true, Yes: true}
	var out bytes.Buffer
	if _, err := Run(testCtx(t), opt, strings.NewReader(""), &out); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	var models []string
	for _, r := range ai.Requests() {
		models = append(models, r.Body.Model)
		if r.Body.MaxTokens != 1 {
			t.Errorf("check request max_tokens %d, want 1", r.Body.MaxTokens)
		}
	}
	if !slices.Equal(models, []string{"small", "large"}) {
		t.Errorf("one-token checks for %v, want small and large", models)
	}
	// init said a one-token request would check the models, and never that it passed (issue 26).
	if !strings.Contains(out.String(), "✓ Model check passed: small and large each answered a one-token request.") {
		t.Errorf("init does not say the model check passed:\n%s", out.String())
	}
	if n := len(tg.Polls()); n != 0 {
		t.Errorf("%d getUpdates calls with --user-id, want none", n)
	}
	cfg, err := config.Check(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 || cfg.LLM.APIKey != "" || cfg.User.Timezone != "UTC" {
		t.Errorf("mode %v, key set %v, zone %q", st.Mode().Perm(), cfg.LLM.APIKey != "", cfg.User.Timezone)
	}
}

func TestScriptedErrors(t *testing.T) {
	t.Parallel()
	_, _, base := withFakes(t)
	base.UserID, base.Yes = owner, true
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no token", func(o *Options) { o.Token = "" }, "the bot token is required with --yes: set ANIMA_TELEGRAM_TOKEN"},
		{"refused token", func(o *Options) { o.Token = "1:" + strings.Repeat("z", 35) }, "refused this token"},
		{"remote endpoint without key", func(o *Options) { o.LLMBaseURL = "https://api.example.com/v1" }, "the API key is required with --yes: set ANIMA_LLM_API_KEY"},
		{"unknown model", func(o *Options) { o.SmartModel = "m2" }, `does not list the model "m2"`},
		{"bad zone", func(o *Options) { o.Timezone = "Nowhere/Else" }, "unknown time zone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.Out = filepath.Join(t.TempDir(), "c.yaml")
			tc.edit(&o)
			_, err := Run(testCtx(t), o, strings.NewReader(""), &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want %q", err, tc.want)
			}
			if _, serr := os.Stat(o.Out); !os.IsNotExist(serr) {
				t.Errorf("a file was written despite the error")
			}
		})
	}
}

var codeLine = regexp.MustCompile(`(?m)^    /start (\d{6})$`)

// printedCode is the one-time code init printed in out.
func printedCode(t *testing.T, out string) string {
	t.Helper()
	m := codeLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no one-time code printed:\n%s", out)
	}
	if !strings.Contains(out, "https://t.me/anima_bot?start="+m[1]) {
		t.Errorf("no deep link with the code %s:\n%s", m[1], out)
	}
	return m[1]
}

// otherCode is a six-digit code that is not code.
func otherCode(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}

// pushFrom queues a private text message from a user with the given names.
func pushFrom(tg *telegramtest.Server, id int64, first, username, text string) int64 {
	m := telegramtest.TextMessage(id, id, models.ChatTypePrivate, text)
	m.From.FirstName, m.From.Username = first, username
	m.Chat.FirstName = first
	return tg.PushMessage(m)
}

// TestOwnerProvesIt: anima init offered whoever wrote first as the owner, yes by default,
// and --yes took them without asking (issue 24). Now only a message carrying the printed
// code is taken, from whoever sends it: a stranger's hello, a wrong code, a bare
// "/start" and a guesser's fourth try (their first three wrong) are ignored and shown
// escaped, and the owner's id is written although someone else wrote first; so with
// --yes and without a terminal. A first_name with CR, ESC[2K and an OSC title sequence
// reaches the terminal as visible escapes, never as control bytes.
func TestOwnerProvesIt(t *testing.T) {
	t.Parallel()
	const (
		guesser = 778
		evil    = "Alice\r\x1b[2K\x1b]0;pwned\x07"
		ownerN  = "Bob\r\x1b[2KEve\u202e"
	)
	for _, tc := range []struct {
		name string
		yes  bool
	}{{"dialogue", false}, {"yes", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg, _, opt := withFakes(t)
			tg.PushText(stranger, stranger, "from before init started")
			var out bytes.Buffer
			sleeps := 0
			opt.Timezone, opt.Yes, opt.Out = "UTC", tc.yes, filepath.Join(t.TempDir(), "c.yaml")
			opt.Sleep = func(ctx context.Context, _ time.Duration) error {
				sleeps++
				switch sleeps {
				case 1: // the first writers have no code, or a wrong one
					code := printedCode(t, out.String())
					pushFrom(tg, stranger, "Mallory", "", "hi, I am your owner")
					pushFrom(tg, guesser, evil, "", "/start "+otherCode(code))
					pushFrom(tg, guesser, evil, "", otherCode(otherCode(code)))
					pushFrom(tg, guesser, evil, "", "/start@anima_bot "+otherCode(otherCode(otherCode(code))))
					pushFrom(tg, guesser, evil, "", "/start "+code) // right, but after three wrong codes
					pushFrom(tg, stranger, "Mallory", "", "/start") // counted, not shown
				case 2:
					if strings.Contains(out.String(), "came from") {
						t.Errorf("a message without the code was taken:\n%s", out.String())
					}
					pushFrom(tg, owner, ownerN, "bob", "/start "+printedCode(t, out.String()))
				}
				return ctx.Err()
			}
			stdin := "\n" // the dialogue asks nothing about the owner: nothing to answer yes to
			cfg, err := Run(testCtx(t), opt, strings.NewReader(stdin), &out)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			got := out.String()
			if !slices.Equal(cfg.Telegram.AllowedUsers, []int64{owner}) {
				t.Errorf("allowed users %v, want the code's sender %d\n%s", cfg.Telegram.AllowedUsers, owner, got)
			}
			file, err := config.Check(opt.Out, true)
			if err != nil || !slices.Equal(file.Telegram.AllowedUsers, []int64{owner}) {
				t.Errorf("written allowed users %v (%v), want [%d]", file.Telegram.AllowedUsers, err, owner)
			}
			for _, want := range []string{
				`Ignored a message from user id 777 (Mallory): no code.`,
				`Ignored a message from user id 778 (Alice\r\x1b[2K\x1b]0;pwned\a): wrong code.`,
				`Ignored a message from user id 778 (Alice\r\x1b[2K\x1b]0;pwned\a): 3 wrong codes from them already.`,
				`Further messages without the code are counted, not shown.`,
				`The code came from user id 4242 (Bob\r\x1b[2KEve\u202e @bob)`,
				`(6 messages without the code were ignored.)`,
			} {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
			if strings.ContainsAny(got, "\r\x1b\x07\u202e") {
				t.Errorf("output carries control characters from Telegram: %q", got)
			}
			if strings.Contains(got, "(y/n)") {
				t.Errorf("init still asks to confirm a sender:\n%s", got)
			}
		})
	}
}

// TestOwnerWaitEnds: with nobody sending the code, init ends at --wait, says how many
// messages it ignored, and writes nothing.
func TestOwnerWaitEnds(t *testing.T) {
	t.Parallel()
	tg, _, opt := withFakes(t)
	tg.PushText(stranger, stranger, "old")
	sleeps := 0
	opt.Yes, opt.Out, opt.Wait = true, filepath.Join(t.TempDir(), "c.yaml"), time.Hour
	opt.Sleep = func(ctx context.Context, _ time.Duration) error {
		if sleeps++; sleeps == 1 {
			tg.PushText(stranger, stranger, "let me in")
			return ctx.Err()
		}
		return context.DeadlineExceeded // the wait is over
	}
	var out bytes.Buffer
	_, err := Run(testCtx(t), opt, strings.NewReader(""), &out)
	if err == nil || !strings.Contains(err.Error(), "the code did not reach @anima_bot") ||
		!strings.Contains(err.Error(), "1 message without the code was ignored") {
		t.Errorf("Run = %v, want the wait to end naming the ignored message\n%s", err, out.String())
	}
	if _, serr := os.Stat(opt.Out); !os.IsNotExist(serr) {
		t.Error("a file was written without the code")
	}
}

// TestSecretsFromPipe: stdin that is a file but not a terminal (a pipe, as in scripts)
// is read line by line for the token and key, the non-terminal side of askSecret; the
// terminal side reads with echo off (term.ReadPassword), which a test cannot drive
// without a pty.
func TestSecretsFromPipe(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("m1")
	ai.SetKey("sk-good")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := w.WriteString(telegramtest.DefaultToken + "\nsk-good\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if terminal(r) != -1 {
		t.Fatal("a pipe taken for a terminal")
	}
	opt := Options{APIURL: tg.URL, LLMBaseURL: ai.URL(), FastModel: "m1", SmartModel: "m1", Timezone: "UTC",
		UserID: owner, Out: filepath.Join(t.TempDir(), "c.yaml")}
	var out bytes.Buffer
	cfg, err := Run(testCtx(t), opt, r, &out)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if cfg.Telegram.Token.Reveal() != telegramtest.DefaultToken || cfg.LLM.APIKey.Reveal() != "sk-good" {
		t.Errorf("token or key not read from the pipe")
	}
	if strings.Contains(out.String(), "not shown as you type") {
		t.Errorf("a pipe was read as a terminal:\n%s", out.String())
	}
}

// TestSecretInputEnds: input that ends before the token is given names the variable that
// gives it without a command line.
func TestSecretInputEnds(t *testing.T) {
	t.Parallel()
	tg := telegramtest.New(t)
	opt := Options{APIURL: tg.URL, Out: filepath.Join(t.TempDir(), "c.yaml")}
	_, err := Run(testCtx(t), opt, strings.NewReader(""), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "set ANIMA_TELEGRAM_TOKEN, or give it on standard input") {
		t.Errorf("Run = %v, want the input's end to name ANIMA_TELEGRAM_TOKEN", err)
	}
}

func TestCodeArg(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, arg string
		ok        bool
	}{
		{"/start 123456", "123456", true},
		{"  /start   123456 ", "123456", true},
		{"/start@anima_bot 123456", "123456", true},
		{"/start@Anima_Bot 123456", "123456", true},
		{"/start@other_bot 123456", "", false},
		{"123456", "123456", true},
		{"12345", "", false},
		{"12345a", "", false},
		{"/start", "", false},
		{"hello", "", false},
		{"my code is 123456", "", false},
		{"/start 123456 extra", "", false},
		{"/begin 123456", "", false},
	} {
		arg, ok := codeArg(tc.text, "anima_bot")
		if arg != tc.arg || ok != tc.ok {
			t.Errorf("codeArg(%q) = %q, %v; want %q, %v", tc.text, arg, ok, tc.arg, tc.ok)
		}
	}
}

func TestNewCode(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 50 {
		c, err := newCode()
		if err != nil {
			t.Fatal(err)
		}
		if len(c) != codeDigits || strings.Trim(c, "0123456789") != "" {
			t.Fatalf("code %q is not %d digits", c, codeDigits)
		}
		seen[c] = true
	}
	if len(seen) < 45 {
		t.Errorf("%d distinct codes in 50 draws: not random", len(seen))
	}
}

// TestOwnerPastAFullQueue: init polled getUpdates without an offset, and Telegram hands
// out only the oldest 100 pending updates, so with 100 pending (left over, or sent by
// anyone who knows the bot's name) the owner's code was never seen and init ended
// blaming it (issue 33). Now init confirms a full page it has looked at all of, and only
// that: the updates from before the code was printed, then messages without the code;
// it says so, the code gets through, and the owner's message and everything after it
// stay pending for anima run.
func TestOwnerPastAFullQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		before, flood int // updates pending before init; messages without the code sent during the wait
		confirmed     int
		says          []string
	}{
		{"100 pending before init", 100, 0, 100, []string{
			"Telegram held 100 or more unread updates for @anima_bot", "init confirmed 100, all sent before it printed your code"}},
		{"250 pending before init", 250, 0, 200, []string{"init confirmed 200, all sent before it printed your code"}},
		{"a flood during the wait", 50, 120, 100, []string{
			"Telegram's queue for @anima_bot is full (100 unread updates, none with the code): init confirms",
			"(120 messages without the code were ignored.)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			tg, _, opt := withFakes(t)
			for i := range tc.before {
				tg.PushText(stranger+int64(i), stranger+int64(i), "left unread")
			}
			var out braintest.Buffer // init writes it on one goroutine while the test reads it on another
			// onWait runs each time init waits for the next message, in a pause between short
			// polls or in a long poll: first the flood, if any, then the owner's code.
			var (
				mu              sync.Mutex
				waits           int
				ownerMsg, lastM int64
			)
			onWait := func() {
				mu.Lock()
				defer mu.Unlock()
				waits++
				switch {
				case waits == 1 && tc.flood > 0:
					for i := range tc.flood {
						tg.PushText(stranger, stranger, fmt.Sprintf("flood %d", i))
					}
				case ownerMsg == 0:
					m := codeLine.FindStringSubmatch(out.String()) // not printedCode: this may run off the test's goroutine
					if m == nil {
						t.Errorf("init waits for a message without having printed the code:\n%s", out.String())
						return
					}
					ownerMsg = tg.PushText(owner, owner, "/start "+m[1])
					lastM = tg.PushText(stranger, stranger, "after the code")
				}
			}
			pollCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			t.Cleanup(func() { stop(); <-done })
			go func() {
				defer close(done)
				for answered := 0; ; answered++ {
					// A long poll in progress beyond those seen: init waits in it.
					err := tg.WaitFor(pollCtx, func() bool {
						n := 0
						for _, p := range tg.Polls() {
							if p.Timeout > 0 {
								if n++; n > answered && p.Answered.IsZero() {
									return true
								}
							}
						}
						return false
					})
					if err != nil {
						return
					}
					onWait()
				}
			}()
			sleeps := 0
			opt.Timezone, opt.Yes, opt.Out = "UTC", true, filepath.Join(t.TempDir(), "c.yaml")
			opt.Sleep = func(ctx context.Context, _ time.Duration) error {
				if sleeps++; sleeps > 20 {
					return context.DeadlineExceeded // the code is not coming through: end the wait
				}
				onWait()
				return ctx.Err()
			}
			cfg, err := Run(ctx, opt, strings.NewReader(""), &out)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			got := out.String()
			if !slices.Equal(cfg.Telegram.AllowedUsers, []int64{owner}) {
				t.Errorf("allowed users %v, want the code's sender %d", cfg.Telegram.AllowedUsers, owner)
			}
			for _, want := range append(tc.says, "came from user id 4242",
				fmt.Sprintf("(%d updates were confirmed to read past a full queue; anima run will not see them.)", tc.confirmed)) {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
			if n := strings.Count(got, "Ignored a message"); n > maxIgnoredShown {
				t.Errorf("%d ignored messages shown, want at most %d", n, maxIgnoredShown)
			}
			if tc.flood == 0 && strings.Contains(got, "Ignored") {
				t.Errorf("updates from before the code was printed were passed to the gate:\n%s", got)
			}
			// Confirmed: exactly the pages looked at, never the owner's message or anything after.
			mu.Lock()
			ownerID, afterID := ownerMsg, lastM
			mu.Unlock()
			pending := tg.Pending()
			if !slices.Contains(pending, ownerID) || !slices.Contains(pending, afterID) {
				t.Errorf("pending %v lacks the owner's message %d or the one after it %d", pending, ownerID, afterID)
			}
			if total := tc.before + tc.flood + 2; len(pending) != total-tc.confirmed {
				t.Errorf("%d updates pending, want %d of %d (%d confirmed)", len(pending), total-tc.confirmed, total, tc.confirmed)
			}
			if off := tg.MaxPollOffset(); off > ownerID {
				t.Errorf("getUpdates offset %d confirmed the owner's message %d", off, ownerID)
			}
		})
	}
}
