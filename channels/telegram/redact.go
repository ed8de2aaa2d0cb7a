package telegram

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// redacted replaces the bot token wherever an error's text would show it.
const redacted = "[redacted]"

// redactor hides the bot token in error texts. Every Bot API request URL holds the token
// (…/bot<TOKEN>/method), and errors quote that URL: net/http's and net/url's errors
// (go-telegram/bot hides it only in some of them), and proxies' error pages, which the
// library copies into its "error decode response body" errors. Every error the channel
// gets from the bot library or its HTTP client passes through Channel.redact before it
// is logged or returned.
type redactor struct {
	forms []string // the token as it may appear in a text, longest first
}

// newRedactor builds a redactor for token: as given, trimmed of surrounding whitespace
// (a token read from a file with its newline shows up in quoted URLs as
// "…:SECRET\n/getMe"), URL-escaped (path and query), Go-quoted, and its secret half
// (after the colon) on its own.
func newRedactor(token string) *redactor {
	r := &redactor{}
	add := func(s string) {
		if s != "" && !slices.Contains(r.forms, s) {
			r.forms = append(r.forms, s)
		}
	}
	trimmed := strings.TrimSpace(token)
	for _, t := range []string{token, trimmed} {
		add(t)
		add(url.PathEscape(t))
		add(url.QueryEscape(t))
		add(strings.Trim(strconv.Quote(t), `"`))
	}
	// The secret half alone is the credential; a very short one is no real token, and
	// replacing it everywhere would garble the text.
	if _, secret, ok := strings.Cut(trimmed, ":"); ok && len(secret) >= 8 {
		add(secret)
		add(url.QueryEscape(secret))
	}
	slices.SortStableFunc(r.forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return r
}

// text returns s with every form of the token replaced by [redacted].
func (r *redactor) text(s string) string {
	for _, f := range r.forms {
		s = strings.ReplaceAll(s, f, redacted)
	}
	return s
}

// err wraps err so that its text never shows the token; nil stays nil. errors.Is and
// errors.As see the wrapped error (a *bot.TooManyRequestsError is still found).
func (r *redactor) err(err error) error {
	if err == nil {
		return nil
	}
	if re, ok := err.(*redactedError); ok && re.r == r {
		return err
	}
	return &redactedError{err: err, r: r}
}

// redactedError is an error whose text has the token replaced by [redacted].
type redactedError struct {
	err error
	r   *redactor
}

func (e *redactedError) Error() string { return e.r.text(e.err.Error()) }

func (e *redactedError) Unwrap() error { return e.err }

// redact is the one way an error from the bot library or the HTTP client leaves the
// channel: its text never shows the token.
func (c *Channel) redact(err error) error { return c.red.err(err) }
