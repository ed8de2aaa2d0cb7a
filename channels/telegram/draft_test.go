package telegram

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestDraftPacing: at most one draft update per DraftInterval per chat; the updates of a
// reply share a draft id, the next reply (after Send) gets another; chats do not pace each
// other.
func TestDraftPacing(t *testing.T) {
	t.Parallel()
	clock := braintest.NewClock(time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC))
	h := newHarness(t, 0, func(_ *Config, o *Options) { o.Now = clock.Now })
	ctx := testCtx(t)
	const other int64 = 3003
	steps := []struct {
		after time.Duration
		chat  int64
		text  string
	}{
		{0, alice, "He"},
		{100 * time.Millisecond, alice, "Hello"},    // skipped
		{0, other, "Yo"},                            // another chat: not paced by alice's
		{199 * time.Millisecond, alice, "Hello th"}, // 299 ms after the first: skipped
		{1 * time.Millisecond, alice, "Hello there"},
		{299 * time.Millisecond, alice, "Hello there, Sam"}, // skipped
		{1 * time.Millisecond, alice, "Hello there, **Sam**"},
	}
	for _, st := range steps {
		clock.Advance(st.after)
		if err := h.ch.Draft(ctx, st.chat, st.text); err != nil {
			t.Fatalf("Draft(%q): %v", st.text, err)
		}
	}
	ds := h.srv.DraftsTo(alice)
	var got []string
	for _, d := range ds {
		got = append(got, d.Text)
		if d.DraftID != ds[0].DraftID || d.ParseMode != "HTML" {
			t.Errorf("draft %+v: want draft id %d and HTML", d, ds[0].DraftID)
		}
	}
	if want := []string{"He", "Hello there", "Hello there, <b>Sam</b>"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("drafts = %q, want %q", got, want)
	}
	if o := h.srv.DraftsTo(other); len(o) != 1 || o[0].DraftID == ds[0].DraftID {
		t.Fatalf("other chat's drafts = %+v, want one with its own id", o)
	}

	// The reply is sent: the next reply is a new draft, shown at once.
	if err := h.ch.Send(ctx, brain.SendMessage{Chat: alice, Text: "Hello there, **Sam**"}); err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Draft(ctx, alice, "Next"); err != nil {
		t.Fatal(err)
	}
	ds = h.srv.DraftsTo(alice)
	if len(ds) != 4 || ds[3].DraftID == ds[0].DraftID {
		t.Fatalf("drafts after a send = %+v, want a fourth with a new id", ds)
	}
}

func TestDraftFailures(t *testing.T) {
	t.Parallel()
	t.Run("group chat refused without a request", func(t *testing.T) {
		h := newHarness(t, 0, nil)
		if err := h.ch.Draft(testCtx(t), group, "hi"); !errors.Is(err, ErrDraftsRefused) {
			t.Fatalf("err = %v, want ErrDraftsRefused", err)
		}
		if n := len(h.srv.CallsTo("sendMessageDraft")); n != 0 {
			t.Fatalf("%d requests", n)
		}
	})
	t.Run("400 refuses", func(t *testing.T) {
		h := newHarness(t, 0, nil)
		h.srv.FailNext("sendMessageDraft", 1, 400, 0)
		if err := h.ch.Draft(testCtx(t), alice, "hi"); !errors.Is(err, ErrDraftsRefused) {
			t.Fatalf("err = %v, want ErrDraftsRefused", err)
		}
	})
	t.Run("403 is blocked", func(t *testing.T) {
		h := newHarness(t, 0, nil)
		h.srv.FailNext("sendMessageDraft", 1, 403, 0)
		if err := h.ch.Draft(testCtx(t), alice, "hi"); !errors.Is(err, brain.ErrBlocked) {
			t.Fatalf("err = %v, want ErrBlocked", err)
		}
	})
	t.Run("404 turns drafts off", func(t *testing.T) {
		h := newHarness(t, 0, nil)
		h.srv.FailNext("sendMessageDraft", 1, 404, 0)
		ctx := testCtx(t)
		if err := h.ch.Draft(ctx, alice, "hi"); !errors.Is(err, ErrDraftsRefused) {
			t.Fatalf("err = %v, want ErrDraftsRefused", err)
		}
		if err := h.ch.Draft(ctx, alice+1, "hi"); !errors.Is(err, ErrDraftsRefused) {
			t.Fatalf("second err = %v, want ErrDraftsRefused", err)
		}
		if n := len(h.srv.CallsTo("sendMessageDraft")); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	})
	for _, code := range []int{429, 500} {
		t.Run("transient "+strconv.Itoa(code)+" is swallowed, not retried", func(t *testing.T) {
			h := newHarness(t, 0, nil)
			h.srv.FailNext("sendMessageDraft", 1, code, 1)
			if err := h.ch.Draft(testCtx(t), alice, "hi"); err != nil {
				t.Fatalf("err = %v, want nil", err)
			}
			if n := len(h.srv.CallsTo("sendMessageDraft")); n != 1 || len(h.sleeps.all()) != 0 {
				t.Fatalf("%d requests, waits %v: a draft is never retried", n, h.sleeps.all())
			}
		})
	}
}

// TestDraftShowsTheLastPart: a reply longer than one message shows the part being written.
func TestDraftShowsTheLastPart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	long := strings.Repeat("word ", 1000) + "THE END"
	if err := h.ch.Draft(testCtx(t), alice, long); err != nil {
		t.Fatal(err)
	}
	ds := h.srv.DraftsTo(alice)
	if len(ds) != 1 || !strings.HasSuffix(ds[0].Visible, "THE END") || telegramtest.UTF16Len(ds[0].Visible) > MaxMessageLength {
		t.Fatalf("drafts = %d, want the last part", len(ds))
	}
}
