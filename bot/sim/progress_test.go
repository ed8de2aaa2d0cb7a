package sim

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeWall is a wall clock the test moves.
type fakeWall struct{ t time.Time }

func (w *fakeWall) now() time.Time { return w.t }

func TestProgressBar(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	wall := &fakeWall{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := newProgress(&out, wall.now)
	wall.t = wall.t.Add(500 * time.Millisecond)
	p.update(10, 100, "day 1/7")
	if out.Len() != 0 {
		t.Fatalf("a bar within the first second: %q", out.String())
	}
	wall.t = wall.t.Add(600 * time.Millisecond)
	p.update(50, 100, "day 4/7")
	if got := out.String(); !strings.Contains(got, " 50% day 4/7") || !strings.Contains(got, "[###############...............]") {
		t.Errorf("bar after 1.1 s = %q", got)
	}
	n := out.Len()
	p.update(51, 100, "day 4/7") // same instant: not redrawn
	if out.Len() != n {
		t.Error("redrawn more often than every 100 ms")
	}
	p.update(100, 100, "day 7/7") // the end is always drawn
	p.done()
	if got := out.String(); !strings.HasSuffix(got, "100% day 7/7\n") {
		t.Errorf("finished bar = %q", got)
	}

	out.Reset()
	quick := newProgress(&out, wall.now)
	quick.update(100, 100, "day 7/7")
	quick.done()
	if out.Len() != 0 {
		t.Errorf("a quick run drew a bar: %q", out.String())
	}
	var none *progress
	none.update(1, 2, "")
	none.done()
}
