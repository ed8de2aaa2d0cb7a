package setup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

const (
	owner    = 4242
	stranger = 777
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
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
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetModels("m1")
	base := Options{Token: telegramtest.DefaultToken, APIURL: tg.URL, LLMBaseURL: ai.URL(), FastModel: "m1", SmartModel: "m1",
		UserID: owner, Yes: true}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no token", func(o *Options) { o.Token = "" }, "--token is required"},
		{"refused token", func(o *Options) { o.Token = "1:" + strings.Repeat("z", 35) }, "refused this token"},
		{"remote endpoint without key", func(o *Options) { o.LLMBaseURL = "https://api.example.com/v1" }, "--llm-key is required"},
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
