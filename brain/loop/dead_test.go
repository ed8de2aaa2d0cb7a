package loop_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// deadHarness is a harness whose failed work is kept in a real store, with a fresh
// registry for anima_dead_letters_total.
func deadHarness(t *testing.T) (*harness, *storage.Store, *prometheus.Registry) {
	return deadHarnessWith(t, storage.Options{})
}

// deadHarnessWith is deadHarness over a store opened with opts (its dead-letter caps).
func deadHarnessWith(t *testing.T, opts storage.Options) (*harness, *storage.Store, *prometheus.Registry) {
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	st, err := storage.Open(filepath.Join(t.TempDir(), "anima.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h.dead = st
	return h, st, h.registry()
}

// onlyLetter returns the one dead letter kept, failing the test unless there is exactly
// one.
func onlyLetter(t *testing.T, st *storage.Store) brain.DeadLetter {
	t.Helper()
	all := letters(t, st)
	if len(all) != 1 {
		t.Fatalf("dead letters %+v, want exactly one", all)
	}
	return all[0]
}

// letters returns the dead letters kept in st.
func letters(t *testing.T, st *storage.Store) []brain.DeadLetter {
	t.Helper()
	all, err := st.DeadLetters()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestDeadLetterUndeliverable: a message the platform refuses for good is kept, whole,
// with the reason, and counted; it is the letter of the user whose turn wrote it (in a
// group too, so that forgetting them deletes it).
func TestDeadLetterUndeliverable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		chat, user int64
	}{{"private chat", 5, 5}, {"group", -9, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, st, reg := deadHarness(t)
			h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
				return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: "an answer Telegram refuses", Kind: brain.KindReply}}}, nil
			}
			h.sender.fail = func(brain.SendMessage) error {
				return fmt.Errorf("400 message is too long: %w", brain.ErrUndeliverable)
			}
			h.start()
			sig := h.msg(1, tc.chat, "hi")
			sig.User = tc.user
			h.submit(sig)
			recv(t, h.sender.attempts, "the refused send")
			h.stop()
			d := onlyLetter(t, st)
			if d.Kind != brain.DeadUndeliverable || d.Chat != tc.chat || d.User != tc.user || d.Message == nil ||
				d.Message.Text != "an answer Telegram refuses" || d.Reason != "400 message is too long: message cannot be delivered" {
				t.Errorf("dead letter %+v, want the refused message to user %d with its reason", d, tc.user)
			}
			if n := deadCount(t, reg, brain.DeadUndeliverable); n != 1 {
				t.Errorf("anima_dead_letters_total{kind=undeliverable} = %v, want 1", n)
			}
		})
	}
}

// TestDeadLetterRecordsDeliveredParts: a split message refused for good after its
// first part went out is kept with that part marked delivered (SkipParts), so a retry
// sends only the rest.
func TestDeadLetterRecordsDeliveredParts(t *testing.T) {
	t.Parallel()
	h, st, _ := deadHarness(t)
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: "a long answer", Kind: brain.KindReply}}}, nil
	}
	h.sender.fail = func(brain.SendMessage) error {
		return &brain.PartialSendError{Sent: 1, Err: fmt.Errorf("send part 2/3: 400 Bad Request: %w", brain.ErrUndeliverable)}
	}
	h.start()
	h.submit(h.msg(1, 5, "hi"))
	recv(t, h.sender.attempts, "the refused send")
	h.stop()
	d := onlyLetter(t, st)
	if d.Message == nil || d.Message.SkipParts != 1 || !d.Message.Arrived.IsZero() {
		t.Errorf("dead letter %+v, want its message with the 1 part delivered recorded", d)
	}
}

// TestDeadLettersDroppedCounted: past the store's cap the oldest letters go, and
// anima_dead_letters_dropped_total counts them.
func TestDeadLettersDroppedCounted(t *testing.T) {
	t.Parallel()
	h, st, reg := deadHarnessWith(t, storage.Options{DeadPerUser: 2, DeadPerChat: 2})
	h.think.script = func(context.Context, brain.Wake) (brain.Outcome, error) {
		return brain.Outcome{}, errors.New("400 model refused")
	}
	h.start()
	for i := range 5 {
		h.submit(h.msg(uint64(i+1), 5, fmt.Sprint("message ", i+1)))
		recv(t, h.sender.attempts, "the apology")
	}
	h.stop()
	var kept []string
	for _, d := range letters(t, st) {
		for _, s := range d.Signals {
			kept = append(kept, s.Text)
		}
	}
	if !slices.Equal(kept, []string{"message 4", "message 5"}) {
		t.Errorf("dead letters hold %q, want the newest two", kept)
	}
	want := `# HELP anima_dead_letters_dropped_total Older dead letters deleted to keep a user's or a chat's within the cap (storage.dead_letters).
# TYPE anima_dead_letters_dropped_total counter
anima_dead_letters_dropped_total 3
`
	exposes(t, reg, "anima_dead_letters_dropped_total", want)
}

// TestDeadLetterRunFailed: a run that fails (not an outage) is kept with the user's
// messages it consumed; the user still gets the apology.
func TestDeadLetterRunFailed(t *testing.T) {
	t.Parallel()
	h, st, reg := deadHarness(t)
	h.think.script = func(context.Context, brain.Wake) (brain.Outcome, error) {
		return brain.Outcome{}, errors.New("both models refused: 400 context length exceeded")
	}
	h.start()
	h.submit(h.msg(7, 5, "tell me a story"))
	if m := recv(t, h.sender.attempts, "the apology"); m.Text != h.cfg.Apology {
		t.Fatalf("sent %q, want the apology", m.Text)
	}
	h.stop()
	d := onlyLetter(t, st)
	if d.Kind != brain.DeadRunFailed || d.Chat != 5 || d.User != 5 || len(d.Signals) != 1 ||
		d.Signals[0].ID != 7 || d.Signals[0].Text != "tell me a story" || d.Reason != "both models refused: 400 context length exceeded" {
		t.Errorf("dead letter %+v, want the consumed message with the run's error", d)
	}
	if n := deadCount(t, reg, brain.DeadRunFailed); n != 1 {
		t.Errorf("anima_dead_letters_total{kind=run_failed} = %v, want 1", n)
	}
}

// TestDeadLetterHoldExpired: messages held for the model past MaxHold are kept when they
// are dropped.
func TestDeadLetterHoldExpired(t *testing.T) {
	t.Parallel()
	h, st, reg := deadHarness(t)
	expireHold(t, h, "still there?")
	d := onlyLetter(t, st)
	if d.Kind != brain.DeadHoldExpired || d.Chat != 5 || d.User != 5 || len(d.Signals) != 1 || d.Signals[0].Text != "still there?" ||
		!d.At.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("dead letter %+v, want the expired message, kept at the drop", d)
	}
	if n := deadCount(t, reg, brain.DeadHoldExpired); n != 1 {
		t.Errorf("anima_dead_letters_total{kind=hold_expired} = %v, want 1", n)
	}
}

// TestRedeliverWhileRunning: outbox entries handed to a running loop (a refused message
// retried) are sent and marked sent.
func TestRedeliverWhileRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.start()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	entry := brain.Outgoing{ID: 42, Msg: brain.SendMessage{Chat: 5, Text: "once more", Kind: brain.KindReply}}
	if err := h.loop.Redeliver(ctx, []brain.Outgoing{entry}); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, h.sender.attempts, "the redelivery"); m.Text != "once more" {
		t.Errorf("sent %q, want the retried message", m.Text)
	}
	h.stop()
	if m := h.journal.Marked(); len(m) != 1 || m[0] != 42 {
		t.Errorf("marked %v, want the retried entry", m)
	}
}
