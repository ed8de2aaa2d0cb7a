// Package plot draws a scenario replay's timeline.png (sim.Options.Draw). It is a
// package of its own so that only anima-sim links gonum/plot, which parses a dozen fonts
// when a process starts: anima, whose `anima sim` runs the silent days, stays without it.
package plot

import (
	"fmt"
	"image/color"
	"io"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/anima-bot/anima/bot/sim"
)

// The picture's size and layout.
const (
	hoursPerTick  = 6    // minor ticks
	plotWidth     = 14   // inches
	plotHeight    = 7    // inches
	pressureShare = 0.55 // of the height left of the legend: the pressure panel; the rest holds the lanes
	legendGap     = 12   // points between the panels and the legend
	glyphRadius   = 3.2  // points
	wakeRadius    = 5.5  // points
)

var (
	colPressure  = color.RGBA{R: 0x33, G: 0x33, B: 0x99, A: 0xff}
	colThreshold = color.RGBA{R: 0xb0, G: 0x30, B: 0x60, A: 0xff} // used for nothing else: the test finds it
	colUser      = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colReply     = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colProactive = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colFollowup  = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	colCheckin   = color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}
	colDream     = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	colLane      = color.RGBA{R: 0xc8, G: 0xc8, B: 0xc8, A: 0xff}
	colActive    = color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0x40} // learned active hours, over the rest
	colQuiet     = color.RGBA{R: 0xe4, G: 0xe4, B: 0xf4, A: 0xff}  // quiet hours background
	colBlocked   = color.RGBA{R: 0xf6, G: 0xc8, B: 0xc8, A: 0xff}  // blocked period background
)

// Draw draws the run in two panels over one time axis on the user's clock, with a legend
// on the right. Above, social pressure on its 0–1 scale with the wake threshold as a
// labelled dashed line and each proactive, follow-up and check-in wake ringed on the
// curve. Below, one named lane each for the person's messages, anima's replies, its
// proactive messages, check-ins and follow-ups, and its dreams. Both panels shade the
// quiet hours, the blocked period and the active hours anima had learned at each moment.
func Draw(w io.Writer, t sim.Picture) error {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	top, err := pressurePanel(t, &leg)
	if err != nil {
		return err
	}
	bottom, err := lanesPanel(t, &leg)
	if err != nil {
		return err
	}
	if err := addBands(&leg, t, nil, 0, 0); err != nil { // the legend's entries only
		return err
	}
	img := vgimg.NewWith(vgimg.UseWH(plotWidth*vg.Inch, plotHeight*vg.Inch), vgimg.UseBackgroundColor(color.White))
	layout(draw.New(img), top, bottom, &leg)
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// layout draws the legend in a strip on the right and the two panels stacked to its left,
// their data areas aligned so that one instant is one column of pixels in both.
func layout(c draw.Canvas, top, bottom *plot.Plot, leg *plot.Legend) {
	legW := leg.Rectangle(c).Size().X
	gap := vg.Points(legendGap)
	leg.Draw(draw.Crop(c, c.Size().X-legW-gap, -gap/2, 0, -gap))
	panels := draw.Crop(c, gap/2, -legW-2*gap, 0, 0)
	h := panels.Size().Y
	cs := []draw.Canvas{
		draw.Crop(panels, 0, 0, h*(1-pressureShare), 0),
		draw.Crop(panels, 0, 0, 0, -h*pressureShare),
	}
	ps := []*plot.Plot{top, bottom}
	var left, right vg.Length
	for i, p := range ps {
		d := p.DataCanvas(cs[i])
		left, right = max(left, d.Min.X-cs[i].Min.X), max(right, cs[i].Max.X-d.Max.X)
	}
	for i, p := range ps {
		d := p.DataCanvas(cs[i])
		p.Draw(draw.Crop(cs[i], left-(d.Min.X-cs[i].Min.X), -(right - (cs[i].Max.X - d.Max.X)), 0, 0))
	}
}

// timeAxis gives p the run's span and its day ticks, labelled only when labelled is set
// (the bottom panel's).
func timeAxis(p *plot.Plot, t sim.Picture, labelled bool) {
	ticks := dayTicks(t)
	if !labelled {
		for i := range ticks {
			ticks[i].Label = ""
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(t.Steps) > 0 {
		p.X.Min, p.X.Max = hours(t, t.Steps[0].At), hours(t, t.Steps[len(t.Steps)-1].At)
	}
}

// hours is the plot's abscissa of at: hours since the start.
func hours(t sim.Picture, at time.Time) float64 { return at.Sub(t.Start).Hours() }

// dayTicks labels each local midnight with its weekday and date (the month is in the
// axis label), with unlabelled ticks between.
func dayTicks(t sim.Picture) []plot.Tick {
	var ticks []plot.Tick
	for d := 0; d <= t.Days; d++ {
		mid := time.Date(t.Start.Year(), t.Start.Month(), t.Start.Day()+d, 0, 0, 0, 0, t.Loc)
		ticks = append(ticks, plot.Tick{Value: hours(t, mid), Label: mid.Format("Mon 2")})
		if d == t.Days {
			break
		}
		for h := hoursPerTick; h < 24; h += hoursPerTick {
			ticks = append(ticks, plot.Tick{Value: hours(t, mid.Add(time.Duration(h)*time.Hour))})
		}
	}
	return ticks
}
