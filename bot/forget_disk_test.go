package bot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/storage"
)

// TestForgetLeavesNoTraceOnDisk: a marker word in 30 private messages and in a dead
// letter (an answer Telegram refused); after /forget the raw store file and a fresh hot
// backup hold it 0 times; an offline compaction refuses while the service runs and works
// once it stopped. (Moved from cmd/anima; the CLI words over bot.Dead, bot.Backup and
// bot.Compact are cmd/anima's TestDeadLetterCLI, TestHotBackupCLI and TestCompactCLI.)
func TestForgetLeavesNoTraceOnDisk(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	clock := h.useClock(testNoon())
	h.opts.PerChatInterval = 10 * time.Millisecond // Telegram's 1 s spacing per chat would make 30 replies take 30 s
	var logs braintest.Buffer
	h.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	store := h.cfg.Storage.Path
	dir := filepath.Dir(store)
	const marker = "quetzalmarker"
	_, stop := h.start()
	// Replies to one chat are paced a second apart (real time): 30 of them take 30 s.
	ctx := testCtx(t, 90*time.Second)
	for i := range 30 {
		clock.Advance(4 * time.Second) // 15 runs a minute: under the per-user rate limit
		h.tg.PushText(user, user, fmt.Sprintf("secret %d: my %s is blue", i, marker))
		if _, err := h.tg.WaitSent(ctx, i+1); err != nil {
			t.Fatalf("message %d not answered: %v", i, err)
		}
	}
	// One answer Telegram refuses for good is kept as a dead letter, marker and all.
	h.tg.FailNext("sendMessage", 1, 400, 0)
	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, fmt.Sprintf("refused: my %s is blue", marker))
	waitUntil(t, ctx, "the refused answer kept as a dead letter", func() bool {
		return forgetHasUndeliverable(t, ctx, store)
	})
	count := func(file string) int { return markerCount(t, file, marker) }
	backup := func(name string) string {
		out := filepath.Join(dir, name)
		if _, err := bot.Backup(ctx, store, out); err != nil {
			t.Fatalf("hot backup: %v", err)
		}
		return out
	}
	before := count(backup("before.db"))
	t.Logf("before /forget: a backup holds the marker %d times", before)
	if before == 0 {
		t.Fatal("the marker is not in a backup before /forget: the test proves nothing")
	}

	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, "/forget")
	if _, err := h.tg.WaitSent(ctx, 31); err != nil {
		t.Fatal(err)
	}
	if !forgetHasUndeliverable(t, ctx, store) {
		t.Fatal("the dead letter is gone before /forget yes")
	}
	h.tg.PushCallback(user, user, fmt.Sprintf("/forget yes %d", user))
	sent, err := h.tg.WaitSent(ctx, 32)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sent[31].Visible, "Done.") {
		t.Fatalf("confirmation = %q", sent[31].Visible)
	}
	// The compaction follows the confirmation a second later on anima's clock.
	clock.Advance(2 * time.Second)
	waitUntil(t, ctx, "the store file without the marker", func() bool { return count(store) == 0 })
	t.Logf("after /forget: the store file holds the marker 0 times")
	if letters, err := bot.Dead(ctx, store, "list"); err != nil || len(letters) != 0 {
		t.Errorf("dead letters after /forget: %+v, %v; want none", letters, err)
	}
	after := count(backup("after.db"))
	t.Logf("after /forget: a fresh backup holds the marker %d times", after)
	if after != 0 {
		t.Errorf("a backup taken after /forget holds the marker %d times", after)
	}

	// The service still works on the compacted file.
	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, "hello again")
	if _, err := h.tg.WaitSent(ctx, 33); err != nil {
		t.Fatalf("no answer after the compaction: %v", err)
	}

	// Offline compaction refuses while the service holds the store...
	if _, err := bot.Compact(store); !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("offline compaction while running: err %v, want the store in use", err)
	}
	stop()
	if !strings.Contains(logs.String(), "store compacted") {
		t.Errorf("the service did not log its compaction:\n%s", logs.String())
	}
	// ...and works once it stopped.
	if rep, err := bot.Compact(store); err != nil || rep.After == 0 {
		t.Errorf("offline compaction: %+v, %v", rep, err)
	}
}

// forgetHasUndeliverable reports whether the store at path keeps an undeliverable dead
// letter (what `anima dead list` shows).
func forgetHasUndeliverable(t *testing.T, ctx context.Context, path string) bool {
	t.Helper()
	letters, err := bot.Dead(ctx, path, "list")
	if err != nil {
		t.Fatalf("dead letters: %v", err)
	}
	for _, d := range letters {
		if d.Kind == brain.DeadUndeliverable {
			return true
		}
	}
	return false
}

// TestForgetReachesAWaitingReaction is issue 24's reproduction: the user writes a secret,
// the echo model answers it back, the user reacts ❤ to the answer (a reaction waits in
// the inbox, quoting the answer, for the chat's next run) and confirms /forget; then
// reacts again to the same answer. A hot backup taken before the owed compaction holds
// the secret 0 times; after the compaction the store file holds it 0 times and, anima
// stopped, the inbox holds no reaction. Before: the waiting reaction stayed in the
// inbox for good, the backup held the secret, and the second reaction was taken (the
// answer's id, waiting for a commit, was still "sent"), quoting the secret again.
func TestForgetReachesAWaitingReaction(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	clock := h.useClock(testNoon())
	var logs braintest.Buffer
	h.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	store := h.cfg.Storage.Path
	const marker = "SILVERKEY4711"
	addrs, stop := h.start()
	ctx := testCtx(t, 60*time.Second)
	h.tg.PushText(user, user, "my bank pin is "+marker)
	sent, err := h.tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sent[0].Visible, marker) {
		t.Fatalf("the answer %q does not echo the secret: the test proves nothing", sent[0].Visible)
	}
	answer := sent[0].ID
	modelQuiet(t, ctx, h.ai, addrs.Metrics) // the turn ends: anima has noted the message it sent
	h.tg.PushReaction(user, user, answer, "❤")
	waitMetric(ctx, t, addrs.Metrics, `anima_signals_total{type="reaction"} 1`)

	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, "/forget")
	if _, err := h.tg.WaitSent(ctx, 2); err != nil {
		t.Fatal(err)
	}
	h.tg.PushCallback(user, user, fmt.Sprintf("/forget yes %d", user))
	if sent, err = h.tg.WaitSent(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sent[2].Visible, "Done.") {
		t.Fatalf("confirmation = %q", sent[2].Visible)
	}
	// A reaction to the answer from before the forget.
	late := h.tg.PushReaction(user, user, answer, "👍")
	if err := h.tg.WaitPollOffset(ctx, late+1); err != nil {
		t.Fatal(err)
	}
	if v := metricSample(t, addrs.Metrics, `anima_telegram_updates_total{kind="reaction_other"}`); v != 1 {
		t.Errorf("a reaction to the answer from before /forget: reaction_other = %v, want 1 (not anima's message any more)", v)
	}

	// The compaction is owed and not yet due on anima's clock: a backup now.
	out := filepath.Join(t.TempDir(), "owed.db")
	if _, err := bot.Backup(ctx, store, out); err != nil {
		t.Fatalf("hot backup: %v", err)
	}
	if n := markerCount(t, out, marker); n != 0 {
		t.Errorf("a backup taken while the erasure is owed holds the secret %d times", n)
	}
	clock.Advance(2 * time.Second)
	waitUntil(t, ctx, "the compaction", func() bool { return strings.Contains(logs.String(), "store compacted") })
	if n := markerCount(t, store, marker); n != 0 {
		t.Errorf("the compacted store file holds the secret %d times", n)
	}
	stop()
	pending, err := h.store().Pending()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range pending {
		if sig.Type == brain.SignalReaction {
			t.Errorf("the inbox keeps a reaction after /forget: %+v", sig)
		}
	}
}
