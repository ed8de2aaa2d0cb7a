package cognition

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// providerErrorRunes is how much of a provider's error anima keeps, in runes.
const providerErrorRunes = 200

// providerError is a failed request's error as anima logs and returns it: the endpoint's
// status, error type and code and the start of its message with quoted text left out,
// never the whole body, which may echo the user's words. errors.As still finds go-openai's
// *APIError or *RequestError beneath it.
type providerError struct {
	err error
	msg string
}

func (e *providerError) Error() string { return e.msg }
func (e *providerError) Unwrap() error { return e.err }

// redactProvider turns an error that carries an endpoint's answer into a providerError;
// other errors (transport, timeouts) come back as they are.
func redactProvider(err error) error {
	var pe *providerError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var b strings.Builder
	switch {
	case errors.As(err, &apiErr):
		fmt.Fprintf(&b, "llm endpoint answered %d", apiErr.HTTPStatusCode)
		if apiErr.Type != "" {
			fmt.Fprintf(&b, ", type %s", redactText(apiErr.Type))
		}
		if code := fmt.Sprint(apiErr.Code); apiErr.Code != nil && code != "" && code != "0" {
			fmt.Fprintf(&b, ", code %s", redactText(code))
		}
		if m := redactText(apiErr.Message); m != "" {
			b.WriteString(": " + m)
		}
	case errors.As(err, &reqErr):
		fmt.Fprintf(&b, "llm endpoint answered %d", reqErr.HTTPStatusCode)
		if m := redactText(string(reqErr.Body)); m != "" {
			b.WriteString(": " + m)
		}
	default:
		return err
	}
	msg := b.String()
	if cut := brain.TruncateRunes(msg, providerErrorRunes); cut != msg {
		msg = cut + "…"
	}
	return &providerError{err: err, msg: msg}
}

// quoted matches quoted text in a provider's message (double, curly, back and single
// quotes; an unclosed quote runs to the end), which is where endpoints echo a request.
var quoted = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*(?:\"|$)|“[^”]*(?:”|$)|`[^`]*(?:`|$)|(?:^|[\\s(\\[{:=,])'[^']*(?:'|$)")

// redactText is s on one line with its quoted parts replaced by "…" and no angle brackets.
func redactText(s string) string {
	s = quoted.ReplaceAllStringFunc(s, func(q string) string {
		if lead := q[0]; lead != '"' && lead != '\'' && lead != '`' && !strings.HasPrefix(q, "“") {
			return q[:1] + `'…'` // the character before a single quote stays
		}
		return `"…"`
	})
	s = strings.NewReplacer("<", " ", ">", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}
