package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/provider"
)

// TestRedact: a provider's error keeps its status, type, code and the
// start of its message, without quoted text, cut to 200 runes; errors.As still finds the
// go-openai error beneath it.
func TestRedact(t *testing.T) {
	t.Parallel()
	secret := "my secret diary entry"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"json", &openai.APIError{HTTPStatusCode: 400, Type: "invalid_request_error", Code: "bad_content",
			Message: `Invalid content "` + secret + `" in messages[2]`},
			`llm endpoint answered 400, type invalid_request_error, code bad_content: Invalid content "…" in messages[2]`},
		{"single quotes", &openai.APIError{HTTPStatusCode: 400, Message: "can't parse '" + secret + "'"},
			`llm endpoint answered 400: can't parse '…'`},
		{"unclosed quote", &openai.APIError{HTTPStatusCode: 400, Message: `bad input: "` + secret},
			`llm endpoint answered 400: bad input: "…"`},
		{"raw body", &openai.RequestError{HTTPStatusCode: 502, Body: []byte("<html>\n<b>Bad gateway</b>\n`" + secret + "`</html>")},
			`llm endpoint answered 502: html b Bad gateway /b "…" /html`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := provider.Redact(fmt.Errorf("stream: %w", tc.err))
			if err.Error() != tc.want {
				t.Errorf("error = %q, want %q", err.Error(), tc.want)
			}
			var apiErr *openai.APIError
			var reqErr *openai.RequestError
			if !errors.As(err, &apiErr) && !errors.As(err, &reqErr) {
				t.Errorf("the go-openai error is lost beneath %q", err)
			}
		})
	}
	long := provider.Redact(&openai.APIError{HTTPStatusCode: 400, Message: strings.Repeat("word ", 100)})
	if n := len([]rune(long.Error())); n != provider.MaxRunes+1 {
		t.Errorf("a long message keeps %d runes, want %d and an ellipsis", n, provider.MaxRunes)
	}
	if err := errors.New("dial tcp: refused"); provider.Redact(err) != err {
		t.Errorf("a transport error was changed")
	}
}

// TestRedactTransportError: a request that never reached the endpoint fails with
// net/http's error, which quotes the request's URL; a key in the base URL's path or query
// (issue 33) is not in the text anima logs, and errors.As still finds the *url.Error.
func TestRedactTransportError(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the request fails in the transport
	cfg := openai.DefaultConfig("sk-header-key")
	cfg.BaseURL = "http://" + addr + "/v1/sk-proj-PATHSECRET"
	_, err = openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}}})
	if err == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	if !strings.Contains(err.Error(), "PATHSECRET") {
		t.Fatalf("the transport error %q does not quote the URL: the test shows nothing", err)
	}
	red := provider.Redact(fmt.Errorf("chat: %w", err))
	if strings.Contains(red.Error(), "PATHSECRET") || !strings.Contains(red.Error(), "http://"+addr+"/v1/***/chat/completions") {
		t.Errorf("redacted error = %q, want the URL with its key hidden", red)
	}
	var ue *url.Error
	if !errors.As(red, &ue) {
		t.Errorf("the *url.Error is lost beneath %q", red)
	}
}
