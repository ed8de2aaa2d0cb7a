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
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/anima-bot/anima/bot/sim"
	"github.com/anima-bot/anima/brain"
)

// The lanes of the plot, in units of social pressure (which runs 0..1).
const (
	laneDream     = 1.25 // anima dreams (the inner life's nightly run)
	laneProactive = 1.1  // anima writes first: proactive, follow-up, check-in
	laneUser      = -0.1 // the user writes
	laneReply     = -0.2 // anima answers
	plotMin       = -0.3 // bottom of the plot
	plotMax       = 2.3  // top of the plot: room for the legend above the lanes
	hoursPerTick  = 6    // minor ticks
	plotWidth     = 14   // inches
	plotHeight    = 5.5  // inches
	glyphRadius   = 3.2  // points
	wakeRadius    = 5.5  // points
)

var (
	colPressure  = color.RGBA{R: 0x33, G: 0x33, B: 0x99, A: 0xff}
	colUser      = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colReply     = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	colProactive = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	colWake      = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colFollowup  = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	colCheckin   = color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}
	colDream     = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	colActive    = color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0x40} // learned active hours, over the rest
	colQuiet     = color.RGBA{R: 0xe4, G: 0xe4, B: 0xf4, A: 0xff}  // quiet hours background
	colBlocked   = color.RGBA{R: 0xf6, G: 0xc8, B: 0xc8, A: 0xff}  // blocked period background
)

// Draw draws the run: social pressure over time on the user's clock; the user's
// active hours as anima had learned them at each moment, quiet hours and the blocked
// period shaded; proactive, follow-up and check-in wakes marked on the pressure line,
// each with its own mark; and, in labelled lanes, anima's dreams, the messages anima
// wrote first (by kind), the user's messages and anima's answers.
func Draw(w io.Writer, t sim.Picture) error {
	p := newPlot(t)
	if err := addBands(p, t); err != nil {
		return err
	}

	var pressure, wakes, followupWakes, checkinWakes, dreams, user, reply, proactive, followup, checkin plotter.XYs
	for _, r := range t.Steps {
		x := hours(t, r.At)
		pressure = append(pressure, plotter.XY{X: x, Y: r.Pressure})
		for _, code := range r.Wakes {
			switch code {
			case brain.ReasonProactive:
				wakes = append(wakes, plotter.XY{X: x, Y: r.Pressure})
			case brain.ReasonFollowup:
				followupWakes = append(followupWakes, plotter.XY{X: x, Y: r.Pressure})
			case brain.ReasonConcernCheckin:
				checkinWakes = append(checkinWakes, plotter.XY{X: x, Y: r.Pressure})
			}
		}
		for range r.Dreams {
			dreams = append(dreams, plotter.XY{X: x, Y: laneDream})
		}
		for range r.User {
			user = append(user, plotter.XY{X: x, Y: laneUser})
		}
		for range r.Reply + r.Other {
			reply = append(reply, plotter.XY{X: x, Y: laneReply})
		}
		for range r.Proactive - r.Checkin {
			proactive = append(proactive, plotter.XY{X: x, Y: laneProactive})
		}
		for range r.Checkin {
			checkin = append(checkin, plotter.XY{X: x, Y: laneProactive})
		}
		for range r.Followup {
			followup = append(followup, plotter.XY{X: x, Y: laneProactive})
		}
	}
	line, err := plotter.NewLine(pressure)
	if err != nil {
		return fmt.Errorf("plot pressure: %w", err)
	}
	line.Color, line.Width = colPressure, vg.Points(1.2)
	p.Add(line)
	p.Legend.Add("social pressure", line)

	for _, s := range []struct {
		label string
		xys   plotter.XYs
		shape draw.GlyphDrawer
		col   color.Color
		r     vg.Length
	}{
		{"proactive wake", wakes, draw.RingGlyph{}, colWake, wakeRadius},
		{"follow-up wake", followupWakes, draw.RingGlyph{}, colFollowup, wakeRadius},
		{"check-in wake", checkinWakes, draw.RingGlyph{}, colCheckin, wakeRadius},
		{"dream", dreams, draw.CrossGlyph{}, colDream, glyphRadius},
		{"user writes", user, draw.TriangleGlyph{}, colUser, glyphRadius},
		{"anima answers", reply, draw.SquareGlyph{}, colReply, glyphRadius},
		{"anima writes first", proactive, draw.CircleGlyph{}, colProactive, glyphRadius},
		{"follow-up", followup, draw.PyramidGlyph{}, colFollowup, glyphRadius},
		{"check-in", checkin, draw.BoxGlyph{}, colCheckin, glyphRadius},
	} {
		if len(s.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return fmt.Errorf("plot %s: %w", s.label, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: s.col, Radius: vg.Points(float64(s.r)), Shape: s.shape}
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}

	wt, err := p.WriterTo(plotWidth*vg.Inch, plotHeight*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}

// newPlot is the timeline's empty plot: title, lanes and day ticks.
func newPlot(t sim.Picture) *plot.Plot {
	p := plot.New()
	name := t.Name
	if name == "" {
		name = "scenario"
	}
	p.Title.Text = fmt.Sprintf("anima sim: %s (user's time, %s)", name, t.Loc)
	p.Y.Label.Text = "social pressure; lanes"
	p.Y.Min, p.Y.Max = plotMin, plotMax
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: laneReply, Label: "anima answers"}, {Value: laneUser, Label: "user writes"},
		{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"},
		{Value: laneProactive, Label: "anima writes first"}, {Value: laneDream, Label: "dreams"}}
	p.X.Tick.Marker = plot.ConstantTicks(dayTicks(t))
	if len(t.Steps) > 0 {
		p.X.Min, p.X.Max = hours(t, t.Steps[0].At), hours(t, t.Steps[len(t.Steps)-1].At)
	}
	p.Legend.Top = true
	return p
}

// addBands shades the hours anima was blocked, in quiet hours, and in the user's active
// hours as learned so far.
func addBands(p *plot.Plot, t sim.Picture) error {
	for _, band := range []struct {
		label string
		col   color.Color
		in    func(sim.PictureStep) bool
	}{
		{"blocked", colBlocked, func(r sim.PictureStep) bool { return r.Blocked }},
		{"quiet hours", colQuiet, func(r sim.PictureStep) bool { return r.Quiet }},
		{"active hours (as learned so far)", colActive, func(r sim.PictureStep) bool { return r.Active }},
	} {
		polys, err := bands(t, band.in, band.col)
		if err != nil {
			return err
		}
		for i, poly := range polys {
			p.Add(poly)
			if i == 0 {
				p.Legend.Add(band.label, poly)
			}
		}
	}
	return nil
}

// hours is the plot's abscissa of at: hours since the start.
func hours(t sim.Picture, at time.Time) float64 { return at.Sub(t.Start).Hours() }

// dayTicks labels each local midnight with its day, with unlabelled ticks between.
func dayTicks(t sim.Picture) []plot.Tick {
	var ticks []plot.Tick
	for d := 0; d <= t.Days; d++ {
		mid := time.Date(t.Start.Year(), t.Start.Month(), t.Start.Day()+d, 0, 0, 0, 0, t.Loc)
		ticks = append(ticks, plot.Tick{Value: hours(t, mid), Label: mid.Format("Mon 02 Jan")})
		if d == t.Days {
			break
		}
		for h := hoursPerTick; h < 24; h += hoursPerTick {
			ticks = append(ticks, plot.Tick{Value: hours(t, mid.Add(time.Duration(h)*time.Hour))})
		}
	}
	return ticks
}

// bands are filled rectangles over the runs of rows for which in holds.
func bands(t sim.Picture, in func(sim.PictureStep) bool, col color.Color) ([]*plotter.Polygon, error) {
	var polys []*plotter.Polygon
	for i := 0; i < len(t.Steps); {
		if !in(t.Steps[i]) {
			i++
			continue
		}
		j := i
		for j < len(t.Steps) && in(t.Steps[j]) {
			j++
		}
		x0, x1 := hours(t, t.Steps[i].At), hours(t, t.Steps[j-1].At.Add(t.Step))
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: plotMin}, {X: x1, Y: plotMin}, {X: x1, Y: plotMax}, {X: x0, Y: plotMax}})
		if err != nil {
			return nil, fmt.Errorf("plot band: %w", err)
		}
		poly.Color = col
		poly.LineStyle.Width = 0
		polys = append(polys, poly)
		i = j
	}
	return polys, nil
}
