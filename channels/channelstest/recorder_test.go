package channelstest_test

import (
	"errors"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/channelstest"
)

// TestRecorder: signals are numbered from 1, an offset of 0 leaves the stored one, queued
// failures fail Record and count as calls, WaitOffset returns what was recorded.
func TestRecorder(t *testing.T) {
	t.Parallel()
	r := channelstest.NewRecorder(5)
	if off, err := r.Offset("telegram"); err != nil || off != 5 {
		t.Fatalf("Offset = %d, %v; want 5", off, err)
	}
	out, err := r.Record("telegram", []brain.Signal{{Text: "a"}, {Text: "b"}}, 7)
	if err != nil || len(out) != 2 || out[0].ID != 1 || out[1].ID != 2 {
		t.Fatalf("Record = %+v, %v; want IDs 1 and 2", out, err)
	}
	if _, err := r.Record("telegram", []brain.Signal{{Text: "c"}}, 0); err != nil {
		t.Fatal(err)
	}
	r.FailNext(1)
	if _, err := r.Record("telegram", []brain.Signal{{Text: "d"}}, 9); !errors.Is(err, channelstest.ErrDiskFull) {
		t.Fatalf("Record with a queued failure = %v, want ErrDiskFull", err)
	}
	sigs, off := r.Snapshot()
	if len(sigs) != 3 || sigs[2].ID != 3 || off != 7 || r.Calls() != 3 {
		t.Fatalf("after 3 calls: %d signals, offset %d, %d calls; want 3, 7, 3", len(sigs), off, r.Calls())
	}
	if got := r.WaitOffset(t, 7); len(got) != 3 {
		t.Fatalf("WaitOffset returned %d signals, want 3", len(got))
	}
}
