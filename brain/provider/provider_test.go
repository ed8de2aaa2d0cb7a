package provider_test

import (
	"errors"
	"fmt"
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
