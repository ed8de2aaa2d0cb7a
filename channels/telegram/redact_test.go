package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/braintest"

	"github.com/go-telegram/bot"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// A token of Telegram's shape, unlike telegramtest.DefaultToken.
const realToken = "7012345678:AAHk3_fake-Token_for-tests-0123456789abc"

func TestRedactorHidesEveryForm(t *testing.T) {
	t.Parallel()
	const spaced = "7012345678:AAHk3 fake-Token/for?tests-0123456789abc"
	tests := []struct {
		name, token, text string
	}{
		{"url", realToken, "Post \"https://api.telegram.org/bot" + realToken + "/getMe\": EOF"},
		{"proxy page", realToken, "error decode response body for method getMe, <p>https://x/bot" + realToken + "/getMe</p>"},
		{"trailing newline, quoted by net/url", realToken + "\n",
			(&url.Error{Op: "parse", URL: "https://x/bot" + realToken + "\n/getMe", Err: errors.New("invalid control character in URL")}).Error()},
		{"trailing newline, raw", realToken + "\n", "bot" + realToken + "\n/getMe"},
		{"path-escaped", spaced, "https://x/bot" + url.PathEscape(spaced) + "/getMe"},
		{"query-escaped", spaced, "token=" + url.QueryEscape(spaced)},
		{"secret half alone", realToken, "secret " + realToken[strings.IndexByte(realToken, ':')+1:] + " seen"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := newRedactor(tc.token).text(tc.text)
			secret := strings.TrimSpace(tc.token)
			secret = secret[strings.IndexByte(secret, ':')+1:]
			for _, leaked := range []string{secret, url.PathEscape(secret), url.QueryEscape(secret), "AAHk3"} {
				if strings.Contains(got, leaked) {
					t.Errorf("text(%q) = %q: still shows %q", tc.text, got, leaked)
				}
			}
			if !strings.Contains(got, redacted) {
				t.Errorf("text(%q) = %q: nothing redacted", tc.text, got)
			}
		})
	}
}

func TestRedactorLeavesOtherTextAlone(t *testing.T) {
	t.Parallel()
	r := newRedactor("1:ab") // no real token: its short secret half is not replaced on its own
	if got := r.text("a cab at 1:ab"); got != "a cab at "+redacted {
		t.Errorf("text = %q", got)
	}
	if r.err(nil) != nil {
		t.Error("err(nil) is not nil")
	}
}

func TestRedactedErrorKeepsClassification(t *testing.T) {
	t.Parallel()
	r := newRedactor(realToken)
	tooMany := &bot.TooManyRequestsError{Message: "too many requests, bot" + realToken, RetryAfter: 7}
	err := fmt.Errorf("send: %w", r.err(tooMany))
	var got *bot.TooManyRequestsError
	if !errors.As(err, &got) || got.RetryAfter != 7 {
		t.Errorf("errors.As(%v) found %v, want the 429 with retry_after 7", err, got)
	}
	if strings.Contains(err.Error(), realToken) {
		t.Errorf("error text shows the token: %v", err)
	}
	forbidden := r.err(fmt.Errorf("%w, blocked at bot%s", bot.ErrorForbidden, realToken))
	if !errors.Is(forbidden, bot.ErrorForbidden) {
		t.Error("errors.Is lost bot.ErrorForbidden")
	}
	if r.err(forbidden) != forbidden {
		t.Error("an error redacted twice was wrapped twice")
	}
}

// TestChannelErrorsNeverShowTheToken drives every Bot API call the channel makes
// against a proxy whose error pages quote the request URL, and checks the token shows
// up neither in the log nor in the errors returned.
func TestChannelErrorsNeverShowTheToken(t *testing.T) {
	t.Parallel()
	var logs braintest.Buffer
	h := newHarness(t, 0, func(c *Config, o *Options) {
		c.Token = realToken
		c.Commands = []Command{{Name: "help", Description: "help"}}
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		o.MaxAttempts = 2
	})
	h.srv.Token = realToken
	page := func(method string) telegramtest.Fault {
		return telegramtest.Fault{Code: http.StatusBadGateway, RawBody: "The requested URL could not be retrieved: " +
			h.srv.URL + "/bot" + realToken + "/" + method}
	}
	for _, m := range []string{"getMe", "deleteWebhook", "setMyCommands", "answerCallbackQuery"} {
		h.srv.InjectFault(m, page(m))
	}
	h.start(t)
	h.srv.PushCallback(alice, alice, "noop")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.srv.WaitCalls(ctx, "answerCallbackQuery", 1); err != nil {
		t.Fatal(err)
	}

	var errs []error
	h.srv.InjectFault("getMe", page("getMe"))
	errs = append(errs, h.ch.ReadyCheck(context.Background()))
	h.srv.InjectFault("sendChatAction", page("sendChatAction"))
	errs = append(errs, h.ch.Typing(context.Background(), alice))
	h.srv.InjectFault("sendMessage", page("sendMessage"))
	h.srv.InjectFault("sendMessage", page("sendMessage"))
	errs = append(errs, h.ch.Send(context.Background(), brain.SendMessage{Chat: alice, Text: "hi"}))
	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d succeeded; the fault was not hit", i)
		}
		if strings.Contains(err.Error(), realToken) || !strings.Contains(err.Error(), redacted) {
			t.Errorf("error %d = %v", i, err)
		}
	}
	for _, want := range []string{"getMe failed", "deleteWebhook failed", "setMyCommands failed", "answerCallbackQuery failed", "send failed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if strings.Contains(logs.String(), realToken) {
		t.Errorf("the log shows the token:\n%s", logs.String())
	}
}

// TestTokenWithNewlineIsNotEchoed: a token read from a file with its newline makes every
// request URL unparseable, and net/url's error quotes the URL.
func TestTokenWithNewlineIsNotEchoed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, func(c *Config, _ *Options) { c.Token = realToken + "\n" })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.ch.ReadyCheck(ctx)
	if err == nil {
		t.Fatal("getMe with a newline in the token succeeded")
	}
	if strings.Contains(err.Error(), "AAHk3") {
		t.Errorf("ReadyCheck error shows the token: %v", err)
	}
	_, err = h.ch.getUpdates(ctx, 0)
	if err == nil || strings.Contains(err.Error(), "AAHk3") {
		t.Errorf("getUpdates error = %v", err)
	}
}
