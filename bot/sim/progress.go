package sim

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a progress bar on a terminal (stderr) for a run that takes longer than
// a second; a quicker run prints nothing. A nil *progress does nothing.
type progress struct {
	w     io.Writer
	now   func() time.Time
	start time.Time
	last  time.Time // last redraw
	shown bool
}

const (
	progressAfter = time.Second            // a run quicker than this shows no bar
	progressEvery = 100 * time.Millisecond // redraws at most this often
	progressWidth = 30                     // characters of the bar
)

// newProgress returns a bar on w (nil: none) reading the wall clock now (nil: time.Now).
func newProgress(w io.Writer, now func() time.Time) *progress {
	if w == nil {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &progress{w: w, now: now, start: now()}
}

// update shows done of total with a label, once the run has taken longer than a second.
func (p *progress) update(done, total int, label string) {
	if p == nil || total <= 0 {
		return
	}
	now := p.now()
	if now.Sub(p.start) < progressAfter || (p.shown && now.Sub(p.last) < progressEvery && done < total) {
		return
	}
	p.shown, p.last = true, now
	fill := done * progressWidth / total
	fmt.Fprintf(p.w, "\r[%s%s] %3d%% %s", strings.Repeat("#", fill), strings.Repeat(".", progressWidth-fill), done*100/total, label)
}

// done ends the bar's line, if it was shown.
func (p *progress) done() {
	if p != nil && p.shown {
		fmt.Fprintln(p.w)
	}
}
