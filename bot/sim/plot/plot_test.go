package plot

import (
	"bytes"
	"image/png"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/anima-bot/anima/bot/sim"
	"github.com/anima-bot/anima/brain"
)

// day is a one-day run, a step an hour, its pressure climbing from 0 to 0.9, with a
// proactive wake and one of each event at 18:00.
func day(threshold float64) sim.Picture {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	p := sim.Picture{Name: "test", Loc: time.UTC, Start: start, Days: 1, Step: time.Hour,
		Threshold: threshold, MinSilence: 6 * time.Hour}
	for h := range 24 {
		s := sim.PictureStep{At: start.Add(time.Duration(h) * time.Hour), Pressure: 0.9 * float64(h) / 23, Quiet: h < 7}
		if h == 18 {
			s.Wakes = []string{brain.ReasonProactive}
			s.User, s.Reply, s.Other, s.Proactive, s.Checkin, s.Followup, s.Dreams = 2, 1, 1, 3, 2, 1, 1
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}

// TestDrawThreshold: the wake threshold is drawn (in its own colour) when the run has
// one and not when proactive contact is off; the picture is 14 × 7 inches at 96 dpi.
func TestDrawThreshold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		threshold float64
		drawn     bool
	}{
		{"proactive on", 0.5, true},
		{"proactive off", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := Draw(&b, day(tc.threshold)); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatal(err)
			}
			if got := img.Bounds().Size(); got.X != plotWidth*96 || got.Y != plotHeight*96 {
				t.Errorf("picture is %v pixels, want %d×%d", got, plotWidth*96, plotHeight*96)
			}
			n := 0
			for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
				for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
					r, g, bl, _ := img.At(x, y).RGBA()
					if r>>8 == uint32(colThreshold.R) && g>>8 == uint32(colThreshold.G) && bl>>8 == uint32(colThreshold.B) {
						n++
					}
				}
			}
			t.Logf("%d pixels in the threshold's colour", n)
			if drawn := n > 200; drawn != tc.drawn {
				t.Errorf("%d pixels in the threshold's colour; want the threshold drawn: %v", n, tc.drawn)
			}
		})
	}
}

// TestLaneMarks: each lane gets one mark per event; check-ins leave the proactive lane,
// reminders and apologies (Other) join the replies.
func TestLaneMarks(t *testing.T) {
	t.Parallel()
	p := day(0.5)
	want := map[string]int{"messages from the person": 2, "anima's replies": 2, "proactive": 1, "check-in": 2, "follow-up": 1, "dream": 1}
	if len(lanes) != len(want) {
		t.Fatalf("%d lanes, want %d", len(lanes), len(want))
	}
	for i, l := range lanes {
		xys := laneMarks(p, i)
		if len(xys) != want[l.name] {
			t.Errorf("lane %q: %d marks, want %d", l.name, len(xys), want[l.name])
		}
		for _, xy := range xys {
			if xy != (plotter.XY{X: 18, Y: laneY(i)}) {
				t.Errorf("lane %q: mark at %v, want 18 h on its lane %v", l.name, xy, laneY(i))
			}
		}
	}
}
