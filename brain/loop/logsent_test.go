package loop_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// recordHandler is a slog.Handler keeping every record with its attributes (those of
// With included), for tests that read what was logged.
type recordHandler struct {
	mu    *sync.Mutex
	recs  *[]slog.Record
	attrs []slog.Attr
}

func newRecordHandler() *recordHandler {
	return &recordHandler{mu: &sync.Mutex{}, recs: &[]slog.Record{}}
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.recs = append(*h.recs, r)
	return nil
}

func (h *recordHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}

func (h *recordHandler) WithGroup(string) slog.Handler { return h }

// records returns the records with message msg, each as its level and attributes.
func (h *recordHandler) records(msg string) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range *h.recs {
		if r.Message != msg {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.Resolve().String()
			return true
		})
		out = append(out, m)
	}
	return out
}

// all returns every record as one line of text, message and attributes.
func (h *recordHandler) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range *h.recs {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		out = append(out, b.String())
	}
	return out
}

// TestLogSent: an operator saw nothing per message at INFO (issue 26). Each turn a model
// run sends is one INFO line "sent" with the chat and user ids, the kind, the model, the
// latency since the message arrived and the tokens, never the text; LogReplies off
// quiets it.
func TestLogSent(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		h := newHarness(t, noProactive())
		h.cfg.LogReplies = on
		logs := newRecordHandler()
		h.logger = slog.New(logs)
		h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
			out := answer(w)
			out.Model, out.Tokens, out.Requests = "gpt-test", 321, 2
			return out, nil
		}
		h.start()
		for i, text := range []string{"my secret plans", "more secret words"} {
			sig := h.msg(uint64(i+1), 7, text)
			sig.Received = t0.Add(-1500 * time.Millisecond)
			h.submit(sig)
			recv(t, h.sender.attempts, "the reply")
		}
		h.stop()

		sent := logs.records("sent")
		if !on {
			if len(sent) != 0 {
				t.Errorf("LogReplies off: %d lines %v, want none", len(sent), sent)
			}
			continue
		}
		if len(sent) != 2 {
			t.Fatalf("%d \"sent\" lines %v, want one per reply (2)", len(sent), sent)
		}
		want := map[string]string{"level": "INFO", "chat": "7", "user": "7", "kind": "reply", "reason": string(brain.ReasonUserMessage),
			"model": "gpt-test", "latency": "1.5s", "tokens": "321", "requests": "2", "messages": "1", "delivered": "true"}
		for _, got := range sent {
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q in %v", k, got[k], v, got)
				}
			}
		}
		for _, line := range logs.all() {
			if strings.Contains(line, "secret") {
				t.Errorf("a log line holds the message text: %s", line)
			}
		}
	}
}
