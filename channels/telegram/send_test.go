package telegram

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

func TestSendBasics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	ctx := testCtx(t)
	err := h.ch.Send(ctx, brain.SendMessage{
		Chat: alice, Text: "a < b & c", ReplyTo: 77,
		Buttons: [][]brain.Button{{{Text: "Yes", Data: "/forget yes"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := h.srv.SentTo(alice)
	if len(sent) != 1 {
		t.Fatalf("sent %d", len(sent))
	}
	m := sent[0]
	if m.Visible != "a < b & c" || m.ParseMode != "HTML" || m.ReplyTo != 77 {
		t.Errorf("message %+v", m)
	}
	if !strings.Contains(string(m.ReplyMarkup), `"callback_data":"/forget yes"`) {
		t.Errorf("markup %s", m.ReplyMarkup)
	}
	if !strings.Contains(string(m.LinkPreview), `"is_disabled":true`) {
		t.Errorf("link preview %s", m.LinkPreview)
	}
	if err := h.ch.Typing(ctx, alice); err != nil {
		t.Fatal(err)
	}
	if a := h.srv.Actions(); len(a) != 1 || a[0].Action != "typing" || a[0].ChatID != alice {
		t.Errorf("actions %+v", a)
	}
	if err := h.ch.ReadyCheck(ctx); err != nil {
		t.Errorf("ReadyCheck: %v", err)
	}
}

func TestSendLongTextSplitInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	var paras []string
	for i := range 30 {
		paras = append(paras, strings.Repeat(string(rune('a'+i%26)), 400))
	}
	text := strings.Join(paras, "\n\n")
	err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: text, ReplyTo: 5,
		Buttons: [][]brain.Button{{{Text: "ok", Data: "/ok"}}}})
	if err != nil {
		t.Fatal(err)
	}
	sent := h.srv.SentTo(alice)
	if len(sent) < 3 {
		t.Fatalf("sent %d parts, want several", len(sent))
	}
	var joined []string
	for i, m := range sent {
		if telegramtest.UTF16Len(m.Visible) > MaxMessageLength {
			t.Errorf("part %d too long", i)
		}
		if (m.ReplyTo != 0) != (i == 0) {
			t.Errorf("part %d reply_to %d: only the first part replies", i, m.ReplyTo)
		}
		if (m.ReplyMarkup != nil) != (i == len(sent)-1) {
			t.Errorf("part %d markup %s: only the last part has buttons", i, m.ReplyMarkup)
		}
		joined = append(joined, strings.Fields(m.Visible)...)
	}
	if diff := cmp.Diff(paras, joined); diff != "" {
		t.Errorf("content out of order or lost (-want +got):\n%s", diff)
	}
}

func TestSendRateLimitedResendsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.FailNext("sendMessage", 1, 429, 2)
	if err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.srv.Sent()); n != 1 {
		t.Errorf("delivered %d messages, want exactly 1", n)
	}
	if n := len(h.srv.CallsTo("sendMessage")); n != 2 {
		t.Errorf("sendMessage called %d times, want 2", n)
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second}, h.sleeps.all()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if got := testutil.ToFloat64(h.ch.met.requests.WithLabelValues("sendMessage", "rate_limited")); got != 1 {
		t.Errorf("rate_limited = %v", got)
	}
}

func TestSendRateLimitedMidMessageKeepsParts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	// Let part 1 through, then rate-limit part 2 once.
	ctx := testCtx(t)
	h.srv.InjectFault("sendMessage", telegramtest.Fault{Code: 429, RetryAfter: 1})
	if err := h.ch.Send(ctx, brain.SendMessage{Chat: alice, Text: xyzText}); err != nil {
		t.Fatal(err)
	}
	xyzOnce(t, h.srv.Sent())
}

// xyzText is a text Send delivers in three parts: 4000 x, 4000 y, 100 z.
var xyzText = strings.Repeat("x", 4000) + "\n\n" + strings.Repeat("y", 4000) + "\n\n" + strings.Repeat("z", 100)

// xyzOnce checks that sent is the three parts of xyzText, each once, in order.
func xyzOnce(t *testing.T, sent []telegramtest.Message) {
	t.Helper()
	if len(sent) != 3 {
		t.Fatalf("delivered %d parts, want 3 (none twice)", len(sent))
	}
	for i, c := range []string{"x", "y", "z"} {
		if !strings.HasPrefix(sent[i].Visible, c) {
			t.Errorf("part %d starts %q, want %q", i, sent[i].Visible[:1], c)
		}
	}
}

func TestSendServerErrorsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.FailNext("sendMessage", 1, 500, 0)
	h.srv.InjectFault("sendMessage", telegramtest.Fault{Code: 502, RawBody: "<html>bad gateway</html>"})
	if err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: "eventually"}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.srv.Sent()); n != 1 {
		t.Errorf("delivered %d, want 1", n)
	}
	if n := len(h.sleeps.all()); n != 2 {
		t.Errorf("backoff waits %d, want 2", n)
	}
	if got := testutil.ToFloat64(h.ch.met.requests.WithLabelValues("sendMessage", "server_error")); got != 2 {
		t.Errorf("server_error = %v", got)
	}
}

func TestSendServerErrorsGiveUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, func(_ *Config, o *Options) { o.MaxAttempts = 3 })
	h.srv.FailNext("sendMessage", 5, 500, 0)
	err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: "never"})
	if err == nil {
		t.Fatal("no error after exhausting retries")
	}
	if n := len(h.srv.CallsTo("sendMessage")); n != 3 {
		t.Errorf("attempts %d, want 3", n)
	}
}

func TestSendBlocked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.FailNext("sendMessage", 1, 403, 0)
	err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: "hi"})
	if !errors.Is(err, brain.ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	if n := len(h.srv.CallsTo("sendMessage")); n != 1 {
		t.Errorf("403 retried: %d calls", n)
	}
	h.srv.FailNext("sendChatAction", 1, 403, 0)
	if err := h.ch.Typing(testCtx(t), alice); !errors.Is(err, brain.ErrBlocked) {
		t.Errorf("typing err = %v", err)
	}
}

func TestSendOtherBadRequestNotRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.InjectFault("sendMessage", telegramtest.Fault{Code: 400, Description: "Bad Request: chat not found"})
	err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: "hi"})
	if err == nil || errors.Is(err, brain.ErrBlocked) || !strings.Contains(err.Error(), "chat not found") {
		t.Fatalf("err = %v", err)
	}
	if !errors.Is(err, brain.ErrUndeliverable) {
		t.Errorf("err = %v, want ErrUndeliverable (retrying cannot help)", err)
	}
	if n := len(h.srv.CallsTo("sendMessage")); n != 1 {
		t.Errorf("calls %d, want 1", n)
	}
}

func TestSendParseErrorFallsBackToPlain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.InjectFault("sendMessage", telegramtest.Fault{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"})
	if err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: "1 < 2 is **true**"}); err != nil {
		t.Fatal(err)
	}
	sent := h.srv.Sent()
	if len(sent) != 1 {
		t.Fatalf("delivered %d, want 1", len(sent))
	}
	if sent[0].ParseMode != "" || !strings.Contains(sent[0].Text, "1 < 2") {
		t.Errorf("fallback %+v, want plain text", sent[0])
	}
}

func TestSendPerChatPacing(t *testing.T) {
	t.Parallel()
	const interval = 150 * time.Millisecond
	h := newHarness(t, 0, func(_ *Config, o *Options) { o.PerChatInterval = interval })
	ctx := testCtx(t)
	for i := range 3 {
		if err := h.ch.Send(ctx, brain.SendMessage{Chat: alice, Text: "m" + string(rune('0'+i))}); err != nil {
			t.Fatal(err)
		}
		if err := h.ch.Send(ctx, brain.SendMessage{Chat: bob, Text: "other"}); err != nil {
			t.Fatal(err)
		}
	}
	sent := h.srv.SentTo(alice)
	if len(sent) != 3 {
		t.Fatalf("sent %d", len(sent))
	}
	for i := 1; i < len(sent); i++ {
		// The server's receive times: spacing counts from the previous answer, so even
		// network jitter cannot bring them closer than the interval.
		if gap := sent[i].At.Sub(sent[i-1].At); gap < interval {
			t.Errorf("gap %d→%d = %v, want ≥ %v", i-1, i, gap, interval)
		}
	}
	if h.ch.locks.size() != 0 {
		t.Errorf("chat locks left behind: %d", h.ch.locks.size())
	}
}

func TestPacerMapBounded(t *testing.T) {
	t.Parallel()
	p := newPacer(time.Millisecond, 0)
	now := time.Now()
	for i := range 10000 {
		p.reserve(int64(i), now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := len(p.chatNext); n > 600 {
		t.Errorf("pacer tracks %d chats, want a bounded number", n)
	}
}

func TestPacerGlobalRate(t *testing.T) {
	t.Parallel()
	p := newPacer(time.Second, 100*time.Millisecond)
	now := time.Now()
	var last time.Time
	for i := range 5 {
		at := p.reserve(int64(i), now)
		if i > 0 && at.Sub(last) != 100*time.Millisecond {
			t.Errorf("reservation %d at +%v after the previous, want 100ms", i, at.Sub(last))
		}
		last = at
	}
	// Same chat again: waits its per-chat second from its first slot.
	if at := p.reserve(0, now); at.Sub(now) != time.Second {
		t.Errorf("per-chat slot at +%v, want 1s", at.Sub(now))
	}
}

func TestSendHonoursContext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, func(_ *Config, o *Options) { o.Sleep = nil })
	h.srv.FailNext("sendMessage", 1, 429, 30)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := h.ch.Send(ctx, brain.SendMessage{Chat: alice, Text: "hi"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
}

// TestSendPartialFailureResumesWithoutRepeats: a split message (Markdown or plain) whose
// second part fails reports the part delivered, whether the failure is passing (500s)
// or for good (400, kept as a dead letter); resent with SkipParts, no part goes twice.
func TestSendPartialFailureResumesWithoutRepeats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		plain         bool
		code, n       int
		undeliverable bool
	}{
		{"markdown, server errors", false, 500, 2, false},
		{"plain, server errors", true, 500, 2, false},
		{"markdown, refused", false, 400, 1, true},
		{"plain, refused", true, 400, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 0, func(_ *Config, o *Options) { o.MaxAttempts = 2 })
			h.srv.InjectFault("sendMessage", telegramtest.Fault{Pass: true})
			h.srv.FailNext("sendMessage", tc.n, tc.code, 0)
			msg := brain.SendMessage{Chat: alice, Text: xyzText, ReplyTo: 7, Plain: tc.plain}
			err := h.ch.Send(testCtx(t), msg)
			var partial *brain.PartialSendError
			if !errors.As(err, &partial) || partial.Sent != 1 || errors.Is(err, brain.ErrUndeliverable) != tc.undeliverable {
				t.Fatalf("err = %v, want a PartialSendError after 1 part (undeliverable: %v)", err, tc.undeliverable)
			}
			// The outbox's retry, or a dead letter's, skips what was delivered.
			msg.SkipParts = partial.Sent
			if err := h.ch.Send(testCtx(t), msg); err != nil {
				t.Fatal(err)
			}
			sent := h.srv.Sent()
			xyzOnce(t, sent)
			if sent[1].ReplyTo != 0 {
				t.Errorf("a resumed part replies to %d; only the first part is a reply", sent[1].ReplyTo)
			}
		})
	}
}

// TestSendPartialCountsSkippedParts: PartialSendError.Sent counts the message's parts
// from its first, the ones skipped as delivered before included.
func TestSendPartialCountsSkippedParts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.InjectFault("sendMessage", telegramtest.Fault{Pass: true})
	h.srv.FailNext("sendMessage", 1, 400, 0)
	err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: xyzText, SkipParts: 1})
	var partial *brain.PartialSendError
	if !errors.As(err, &partial) || partial.Sent != 2 {
		t.Fatalf("err = %v, want a PartialSendError with 2 parts delivered (1 before, 1 now)", err)
	}
	if sent := h.srv.Sent(); len(sent) != 1 || !strings.HasPrefix(sent[0].Visible, "y") {
		t.Errorf("sent %d parts, want only the second", len(sent))
	}
}

func TestSendNothingVisibleIsUndeliverable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	err := h.ch.Send(testCtx(t), brain.SendMessage{Chat: alice, Text: "   \n\n  "})
	if !errors.Is(err, brain.ErrUndeliverable) {
		t.Fatalf("err = %v, want ErrUndeliverable", err)
	}
}

func TestPacerGroupsGetThreeTimesTheInterval(t *testing.T) {
	t.Parallel()
	p := newPacer(time.Second, time.Millisecond)
	now := time.Now()
	p.done(-100, now)
	p.done(7, now)
	if got := p.chatReady(-100).Sub(now); got != 3*time.Second {
		t.Errorf("group chat may send again after %v, want 3s (20 messages a minute)", got)
	}
	if got := p.chatReady(7).Sub(now); got != time.Second {
		t.Errorf("private chat may send again after %v, want 1s", got)
	}
}

// TestIsAdmin: the owner and administrators of a group are admins, other members are not,
// and a failed getChatMember is an error that does not show the token.
func TestIsAdmin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	const group = -100777
	h.srv.SetMember(group, 1, telegramtest.StatusOwner)
	h.srv.SetMember(group, 2, telegramtest.StatusAdmin)
	ctx := context.Background()
	for user, want := range map[int64]bool{1: true, 2: true, 3: false} {
		got, err := h.ch.IsAdmin(ctx, group, user)
		if err != nil || got != want {
			t.Errorf("IsAdmin(%d) = %v, %v; want %v", user, got, err, want)
		}
	}
	var call telegramtest.Call
	for _, c := range h.srv.Calls() {
		if c.Method == "getChatMember" {
			call = c
		}
	}
	if call.Status != 200 {
		t.Errorf("getChatMember answered %d: the request broke the Bot API's rules", call.Status)
	}
	// A proxy's error page that quotes the request URL, token and all.
	h.srv.InjectFault("getChatMember", telegramtest.Fault{Code: 502, RawBody: "<html>bad gateway for /bot" + h.srv.Token + "/getChatMember</html>"})
	_, err := h.ch.IsAdmin(ctx, group, 1)
	if err == nil || strings.Contains(err.Error(), h.srv.Token) {
		t.Errorf("IsAdmin on a failed call = %v; want an error without the token", err)
	}
}
