package mcp

import (
	"context"
	"log/slog"

	"github.com/anima-bot/anima/brain"
)

// redactedError is an error whose text has every URL in it redacted
// (brain.RedactURLs): net/http's errors, and the SDK's that wrap them, carry the
// server's URL with its query, where an API key may be.
type redactedError struct{ err error }

// redact returns err with the URLs in its text redacted, or nil.
func redact(err error) error {
	if err == nil {
		return nil
	}
	return redactedError{err}
}

func (e redactedError) Error() string { return brain.RedactURLs(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }

// redactHandler redacts the URLs in every message and attribute the manager logs, an
// error's text included, so that no log line of a server shows its URL's secrets
// whichever error or field carries it.
type redactHandler struct{ next slog.Handler }

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, brain.RedactURLs(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = redactAttr(a)
	}
	return redactHandler{h.next.WithAttrs(out)}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h.next.WithGroup(name)}
}

// redactAttr redacts the URLs in a's string or error value, and in a group's members.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, brain.RedactURLs(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, g := range as {
			out[i] = redactAttr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.Any(a.Key, redact(err))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
