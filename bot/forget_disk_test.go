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
