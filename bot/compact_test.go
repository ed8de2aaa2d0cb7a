package bot

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/storage"
)

// compactHarness is a real store with a compactor on a fake clock; compactions counts
// the compactions by the file they leave (each one renames a new file over the store).
type compactHarness struct {
	t     *testing.T
	store *storage.Store
	clock *braintest.Clock
	c     *storeCompactor
	file  os.FileInfo
}

func newCompactHarness(t *testing.T, path string) *compactHarness {
	t.Helper()
	return newCompactHarnessWith(t, path, storage.Options{})
}

// newCompactHarnessWith is newCompactHarness on a store opened with opts.
func newCompactHarnessWith(t *testing.T, path string, opts storage.Options) *compactHarness {
	t.Helper()
	st, err := storage.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clock := braintest.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	h := &compactHarness{t: t, store: st, clock: clock, c: newStoreCompactor(st, clock, 10*time.Minute, slog.New(slog.DiscardHandler))}
	h.file = h.stat()
	return h
}

func (h *compactHarness) stat() os.FileInfo {
	h.t.Helper()
	fi, err := os.Stat(h.store.Path())
	if err != nil {
		h.t.Fatal(err)
	}
	return fi
}

// compacted reports whether the store's file was replaced since the last call.
func (h *compactHarness) compacted() bool {
	fi := h.stat()
	replaced := !os.SameFile(fi, h.file)
	h.file = fi
	return replaced
}

// remember stores a message of user's private chat.
func (h *compactHarness) remember(user int64) {
	h.t.Helper()
	turn := brain.Turn{Role: "user", Text: "something to forget", User: user, At: h.clock.Now()}
	if _, err := h.store.CommitTurn(storage.Commit{Chat: user, Turns: []brain.Turn{turn}}, h.clock.Now()); err != nil {
		h.t.Fatal(err)
	}
}

func (h *compactHarness) forget(user int64) string {
	h.t.Helper()
	cmds := &commands{forget: userForgetter{store: h.store}, compact: h.c}
	res, err := cmds.Command(context.Background(), brain.Signal{Chat: user, User: user, Text: "/forget yes"},
		loop.CommandView{Now: h.clock.Now(), Loc: time.UTC})
	if err != nil || len(res.Reply) != 1 {
		h.t.Fatalf("/forget yes = %+v, %v", res, err)
	}
	return res.Reply[0].Text
}

// TestForgetHammerCostsOneCompactionPerInterval: one user sending /forget yes every
// second for 21 minutes (re-storing a message each time) costs at most one compaction
// per interval: the first within a second, then one every 10 minutes (two whole
// intervals, and a minute of the third; half an hour showed the same in half as much again). Each confirmation
// says when the words leave the disk, and that time is kept.
func TestForgetHammerCostsOneCompactionPerInterval(t *testing.T) {
	t.Parallel()
	// 2,520 commits whose point is the compactions' cadence, not durability: they skip
	// the fsync.
	h := newCompactHarnessWith(t, filepath.Join(t.TempDir(), "anima.db"), storage.Options{NoSync: true})
	start := h.clock.Now()
	var at []time.Duration
	for i := range 21 * 60 {
		h.remember(7)
		reply := h.forget(7)
		if i == 0 && !strings.Contains(reply, "Within a minute they are gone from my disk too.") {
			t.Errorf("the first /forget after a quiet spell: %q", reply)
		}
		if i == 1 && !strings.Contains(reply, "gone from my disk too by 12:11 (in 10m)") {
			t.Errorf("a /forget a second after a compaction: %q", reply)
		}
		h.clock.Advance(time.Second)
		h.c.poll(h.clock.Now())
		if h.compacted() {
			at = append(at, h.clock.Now().Sub(start))
		}
	}
	want := []time.Duration{time.Second, 10*time.Minute + time.Second, 20*time.Minute + time.Second}
	if len(at) != len(want) {
		t.Fatalf("compactions at %v, want %v", at, want)
	}
	for i := range want {
		if at[i] != want[i] {
			t.Errorf("compaction %d at %v, want %v", i, at[i], want[i])
		}
	}
}

// TestForgetOfNothingDoesNotCompact: a /forget from a user with nothing stored deletes
// nothing, so nothing is owed and the store is not rewritten.
func TestForgetOfNothingDoesNotCompact(t *testing.T) {
	t.Parallel()
	h := newCompactHarness(t, filepath.Join(t.TempDir(), "anima.db"))
	h.remember(8) // someone else
	reply := h.forget(7)
	if strings.Contains(reply, "disk") {
		t.Errorf("nothing was deleted, yet the reply promises an erasure: %q", reply)
	}
	for range 5 {
		h.clock.Advance(time.Minute)
		h.c.poll(h.clock.Now())
	}
	if h.compacted() {
		t.Error("the store was compacted after a /forget that deleted nothing")
	}
}

// TestCompactionOwedAcrossACrash: the process dies after /forget deleted the words and
// before the compaction (a SIGKILL leaves a half-written .compact too); the next start
// removes the leftover and compacts within a second, and the words are gone from the file.
func TestCompactionOwedAcrossACrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	const marker = "marker-of-the-crashed-erasure"
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := st.CommitTurn(storage.Commit{Chat: 7, Turns: []brain.Turn{{Role: "user", Text: strings.Repeat(marker+" ", 50), User: 7}}}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := st.ForgetUser(7, nil); err != nil || !rep.Erased {
		t.Fatalf("ForgetUser = %+v, %v", rep, err)
	}
	_ = st.Close() // the crash: no compaction ran
	if err := os.WriteFile(path+".compact", []byte(marker), 0o600); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(path); !strings.Contains(string(raw), marker) {
		t.Fatal("the forgotten words are not in the file before the compaction: the test proves nothing")
	}

	h := newCompactHarness(t, path)
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Errorf("the crashed compaction's copy is still there: %v", err)
	}
	h.c.resume()
	h.clock.Advance(time.Second)
	h.c.poll(h.clock.Now())
	if !h.compacted() {
		t.Fatal("the owed compaction did not run a second after the start")
	}
	if raw, _ := os.ReadFile(path); strings.Contains(string(raw), marker) {
		t.Error("the forgotten words are still in the file after the start's compaction")
	}
	if pending, err := h.store.ErasurePending(); err != nil || pending {
		t.Errorf("ErasurePending after the compaction = %v, %v", pending, err)
	}
}
