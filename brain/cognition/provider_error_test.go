package cognition

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
)

// TestRefusesStream: only a 4xx that says streaming is unsupported turns streaming off.
func TestRefusesStream(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&openai.APIError{HTTPStatusCode: 400, Message: "stream is not supported"}, true},
		{&openai.APIError{HTTPStatusCode: 400, Message: "Streaming is unsupported for this model"}, true},
		{&openai.APIError{HTTPStatusCode: 422, Message: "This endpoint does not support streaming responses"}, true},
		{&openai.RequestError{HTTPStatusCode: 400, Body: []byte("<h1>stream: not supported</h1>")}, true},
		{&openai.APIError{HTTPStatusCode: 400, Message: "maximum context length is 8192 tokens"}, false},
		{&openai.APIError{HTTPStatusCode: 400, Message: "Invalid value for 'temperature'"}, false},
		{&openai.APIError{HTTPStatusCode: 400, Message: `content "please stream it" is not supported`}, false},
		{&openai.APIError{HTTPStatusCode: 429, Message: "stream not supported while rate limited"}, false},
		{&openai.APIError{HTTPStatusCode: 500, Message: "streaming unsupported"}, false},
		{errors.New("connection reset"), false},
	} {
		if got := refusesStream(fmt.Errorf("wrapped: %w", tc.err)); got != tc.want {
			t.Errorf("refusesStream(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestProviderErrorsAreRedacted: a provider's error keeps its status, type, code and the
// start of its message, without quoted text, cut to 200 runes; errors.As still finds the
// go-openai error beneath it.
func TestProviderErrorsAreRedacted(t *testing.T) {
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
			err := redactProvider(fmt.Errorf("stream: %w", tc.err))
			if err.Error() != tc.want {
				t.Errorf("error = %q, want %q", err.Error(), tc.want)
			}
			if httpStatus(err) == 0 {
				t.Errorf("the status is lost beneath %q", err)
			}
		})
	}
	long := redactProvider(&openai.APIError{HTTPStatusCode: 400, Message: strings.Repeat("word ", 100)})
	if n := len([]rune(long.Error())); n != providerErrorRunes+1 {
		t.Errorf("a long message keeps %d runes, want %d and an ellipsis", n, providerErrorRunes)
	}
	if err := errors.New("dial tcp: refused"); redactProvider(err) != err {
		t.Errorf("a transport error was changed")
	}
}
