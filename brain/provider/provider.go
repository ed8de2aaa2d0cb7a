// Package provider is what anima knows of an OpenAI-compatible endpoint failing: what it
// keeps of a failed answer when it logs or returns it (Redact: the status, error type and
// code and the start of the message, never the whole body, which may echo the user's
// words), how it classifies the failure (Classify, Status: the endpoint's, and retried, or
// the request's), and the circuit breaker that counts the endpoint's failures (Breaker).
// Cognition (chat, transcription), speech and memory (the summarizer) use it alike. It
// imports brain and go-openai, nothing else of ours.
package provider

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// MaxRunes is how much of a provider's error anima keeps, in runes.
const MaxRunes = 200

// Error is a failed request's error as anima logs and returns it: the endpoint's
// status, error type and code and the start of its message with quoted text left out,
// never the whole body, which may echo the user's words. errors.As still finds go-openai's
// *APIError or *RequestError beneath it.
type Error struct {
	err error
	msg string
}

// Error returns the redacted message.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the error as the client returned it (not for logging).
func (e *Error) Unwrap() error { return e.err }

// Redact turns an error that carries an endpoint's answer (go-openai's *APIError or
// *RequestError, wrapped or not) into an *Error; other errors (transport, timeouts) keep
// their text with the URLs in it redacted (brain.RedactURLs: net/http's errors quote the
// request's URL, and a key may be in its path or query), and come back as they are when
// no URL is in them, as does one already redacted.
func Redact(err error) error {
	var pe *Error
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
			fmt.Fprintf(&b, ", type %s", Text(apiErr.Type))
		}
		if code := fmt.Sprint(apiErr.Code); apiErr.Code != nil && code != "" && code != "0" {
			fmt.Fprintf(&b, ", code %s", Text(code))
		}
		if m := Text(apiErr.Message); m != "" {
			b.WriteString(": " + m)
		}
	case errors.As(err, &reqErr):
		fmt.Fprintf(&b, "llm endpoint answered %d", reqErr.HTTPStatusCode)
		if m := Text(string(reqErr.Body)); m != "" {
			b.WriteString(": " + m)
		}
	default:
		if msg := brain.RedactURLs(err.Error()); msg != err.Error() {
			return &Error{err: err, msg: msg}
		}
		return err
	}
	msg := b.String()
	if cut := brain.TruncateRunes(msg, MaxRunes); cut != msg {
		msg = cut + "…"
	}
	return &Error{err: err, msg: msg}
}

// quoted matches quoted text in a provider's message (double, curly, back and single
// quotes; an unclosed quote runs to the end), which is where endpoints echo a request.
var quoted = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*(?:\"|$)|“[^”]*(?:”|$)|`[^`]*(?:`|$)|(?:^|[\\s(\\[{:=,])'[^']*(?:'|$)")

// Text is s on one line with its quoted parts replaced by "…" and no angle brackets.
func Text(s string) string {
	s = quoted.ReplaceAllStringFunc(s, func(q string) string {
		if lead := q[0]; lead != '"' && lead != '\'' && lead != '`' && !strings.HasPrefix(q, "“") {
			return q[:1] + `'…'` // the character before a single quote stays
		}
		return `"…"`
	})
	s = strings.NewReplacer("<", " ", ">", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}
