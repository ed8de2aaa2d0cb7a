package bot_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

// The waits the package's tests share: a deadline, a condition, the loop's ticks and the
// model's quiet, each read from anima itself rather than slept out.

// testCtx is a context for a test's waits that ends after d (a long exchange may need
// more than waitCtx's 20 s under load).
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	return braintest.Within(t, d)
}

// waitCtx is the context for a single wait: 20 s.
func waitCtx(t *testing.T) context.Context {
	t.Helper()
	return testCtx(t, 20*time.Second)
}

// waitUntil polls cond every 20 ms until it holds; it fails the test, naming what, when ctx
// ends first.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// metricSample reads one sample, named as exposed (name{label="value",…}, labels in
// their exposed order), from anima's /metrics at addr (scrape); -1 when it is not there.
func metricSample(t *testing.T, addr, sample string) float64 {
	t.Helper()
	name, labels, _ := strings.Cut(strings.TrimSuffix(sample, "}"), "{")
	mf := scrape(t, addr)[name]
	if mf == nil {
		return -1
	}
	for _, m := range mf.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		if strings.Join(got, ",") != labels {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Untyped != nil:
			return m.GetUntyped().GetValue()
		}
	}
	return -1
}

// ticks is anima_ticks_total on anima's /metrics at addr: how many times its loop ticked.
func ticks(t *testing.T, addr string) float64 {
	t.Helper()
	return metricValue(t, scrape(t, addr), "anima_ticks_total")
}

// testNoon is where the tests' manual clocks start: today's noon UTC (the user's default
// zone), far from midnight and from the night a follow-up waits out, so that no test's
// day rolls over while it runs, whatever the wall clock says.
func testNoon() time.Time {
	return time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
}

// stepTicks is how many of the loop's ticks advance waits for: the first may have read the
// clock before it moved, so the later ones ran a whole tick, rules and wakes included, on
// the new time.
const stepTicks = 3

// advance moves clock by d and returns once the loop of the anima whose metrics listen on
// addr has ticked stepTicks times since, so it has taken the new time in. It is the one
// way these tests move the manual clock under a running anima.
func advance(t *testing.T, clock *braintest.Clock, addr string, d time.Duration) {
	t.Helper()
	from := ticks(t, addr)
	clock.Advance(d)
	waitTicks(t, addr, from)
}

// waitTicks waits until the loop has ticked stepTicks times since it stood at from.
func waitTicks(t *testing.T, addr string, from float64) {
	t.Helper()
	waitUntil(t, waitCtx(t), "the loop's ticks", func() bool { return ticks(t, addr) >= from+stepTicks })
}

// quietTicks is how many of the loop's ticks without a model request modelQuiet waits out
// (a second at the harness's 50 ms tick).
const quietTicks = 20

// modelQuiet waits until the fake model ai has not been asked anything while the loop of
// the anima at addr ticked quietTicks times: the turn in flight has ended. Counted in the
// loop's ticks, the wait stretches with a loaded machine.
func modelQuiet(t *testing.T, ctx context.Context, ai *openaitest.Server, addr string) {
	t.Helper()
	n, since := len(ai.Requests()), ticks(t, addr)
	waitUntil(t, ctx, "the model to be quiet", func() bool {
		now := ticks(t, addr)
		if m := len(ai.Requests()); m != n {
			n, since = m, now
		}
		return now-since >= quietTicks
	})
}

// stopped stops anima (stop, from h.start) and opens its store file for the test to
// read; it is closed when the test ends.
func (h *harness) stopped(stop func()) *storage.Store {
	h.t.Helper()
	stop()
	return storagetest.Open(h.t, h.cfg.Storage.Path)
}

// hotBackup checks the running anima's control socket (a 0600 socket beside the store)
// and takes a hot backup through it, as `anima backup` does; it returns the copy, opened
// read-only and closed when the test ends.
func (h *harness) hotBackup() *storage.Store {
	h.t.Helper()
	fi, err := os.Stat(bot.ControlSocket(h.cfg.Storage.Path))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		h.t.Fatalf("control socket: %v, mode %v; want a 0600 socket beside the store", err, fi.Mode())
	}
	out := filepath.Join(h.t.TempDir(), "backup.db")
	n, err := bot.Backup(context.Background(), h.cfg.Storage.Path, out)
	if err != nil {
		h.t.Fatalf("hot backup while running: %v", err)
	}
	if n == 0 {
		h.t.Fatal("empty backup")
	}
	st, err := storage.Open(out, storage.Options{ReadOnly: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { st.Close() })
	return st
}

// bury keeps letters in the harness's store as dead letters before anima starts.
func (h *harness) bury(letters ...brain.DeadLetter) {
	h.t.Helper()
	st, err := storage.Open(h.cfg.Storage.Path, storage.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, d := range letters {
		if _, err := st.Bury(d); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		h.t.Fatal(err)
	}
}

// forgetYes presses the user's /forget confirmation and waits for anima's confirmation,
// its nth message in all.
func (h *harness) forgetYes(ctx context.Context, n int) {
	h.t.Helper()
	h.tg.PushCallback(user, user, fmt.Sprintf("/forget yes %d", user))
	sent, err := h.tg.WaitSent(ctx, n)
	if err != nil {
		h.t.Fatal(err)
	}
	if !strings.HasPrefix(sent[n-1].Visible, "Done.") {
		h.t.Fatalf("confirmation = %q", sent[n-1].Visible)
	}
}

// backupMarkers takes a hot backup of the anima running on the store at path and
// returns how often marker occurs in the copy's bytes.
func backupMarkers(t *testing.T, ctx context.Context, path, marker string) int {
	t.Helper()
	out := filepath.Join(t.TempDir(), "backup.db")
	if _, err := bot.Backup(ctx, path, out); err != nil {
		t.Fatalf("hot backup: %v", err)
	}
	return markerCount(t, out, marker)
}

// wantWithin logs how long after its cause what came (gap) and fails t unless that is
// between lo and hi.
func wantWithin(t *testing.T, what string, gap, lo, hi time.Duration) {
	t.Helper()
	t.Logf("%s: %v", what, gap)
	if gap < lo || gap > hi {
		t.Errorf("%s came %v later, want between %v and %v", what, gap, lo, hi)
	}
}

// markerCount is how often marker occurs in file's bytes.
func markerCount(t *testing.T, file, marker string) int {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(raw, []byte(marker))
}
