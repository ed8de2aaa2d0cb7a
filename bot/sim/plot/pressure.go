package plot

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/anima-bot/anima/bot/sim"
	"github.com/anima-bot/anima/brain"
)

// pressureMax is the top of the pressure axis: a little room over 1 for the wake rings.
const pressureMax = 1.08

// pressurePanel is the upper panel: the social pressure curve on its own 0–1 axis, the
// wake threshold, and the wakes that let anima write first ringed on the curve. Its
// entries go into leg.
func pressurePanel(t sim.Picture, leg *plot.Legend) (*plot.Plot, error) {
	p := plot.New()
	name := t.Name
	if name == "" {
		name = "scenario"
	}
	p.Title.Text = fmt.Sprintf("anima sim: %s, %d days on the person's clock (%s)", name, t.Days, t.Loc)
	p.Y.Label.Text = "social pressure (0–1)"
	p.Y.Min, p.Y.Max = 0, pressureMax
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.25}, {Value: 0.5, Label: "0.5"}, {Value: 0.75}, {Value: 1, Label: "1"}}
	timeAxis(p, t, false)
	if err := addBands(leg, t, p, 0, pressureMax); err != nil {
		return nil, err
	}

	var curve plotter.XYs
	wakes := map[string]plotter.XYs{}
	for _, r := range t.Steps {
		x := hours(t, r.At)
		curve = append(curve, plotter.XY{X: x, Y: r.Pressure})
		for _, code := range r.Wakes {
			wakes[code] = append(wakes[code], plotter.XY{X: x, Y: r.Pressure})
		}
	}
	line, err := plotter.NewLine(curve)
	if err != nil {
		return nil, fmt.Errorf("plot pressure: %w", err)
	}
	line.Color, line.Width = colPressure, vg.Points(1.2)
	p.Add(line)
	leg.Add("social pressure", line)
	if err := addThreshold(p, t, leg); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		label, code string
		col         color.Color
	}{
		{"wake: proactive", brain.ReasonProactive, colProactive},
		{"wake: check-in", brain.ReasonConcernCheckin, colCheckin},
		{"wake: follow-up", brain.ReasonFollowup, colFollowup},
	} {
		if err := addMarks(p, leg, s.label, wakes[s.code], draw.GlyphStyle{Color: s.col, Radius: vg.Points(wakeRadius), Shape: draw.RingGlyph{}}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// addThreshold draws the wake threshold as a dashed line across the run, labelled at its
// left end, and adds it to leg; nothing when proactive contact is off.
func addThreshold(p *plot.Plot, t sim.Picture, leg *plot.Legend) error {
	if t.Threshold <= 0 || len(t.Steps) == 0 {
		return nil
	}
	x0, x1 := hours(t, t.Steps[0].At), hours(t, t.Steps[len(t.Steps)-1].At)
	line, err := plotter.NewLine(plotter.XYs{{X: x0, Y: t.Threshold}, {X: x1, Y: t.Threshold}})
	if err != nil {
		return fmt.Errorf("plot threshold: %w", err)
	}
	line.Color, line.Width, line.Dashes = colThreshold, vg.Points(1.5), []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(line)
	leg.Add("wake threshold", line)
	label := fmt.Sprintf("wake threshold %.2g: %s of waking silence (longer after unanswered first messages)",
		t.Threshold, brain.Duration(t.MinSilence))
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x0, Y: t.Threshold}}, Labels: []string{label}})
	if err != nil {
		return fmt.Errorf("plot threshold: %w", err)
	}
	labels.TextStyle[0] = text.Style{Color: colThreshold, Font: labels.TextStyle[0].Font, Handler: labels.TextStyle[0].Handler}
	labels.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(3)}
	p.Add(labels)
	return nil
}

// addMarks scatters xys on p in sty and adds them to leg under label, also when the run
// has none, so that the legend tells a reader what the absent mark would look like.
func addMarks(p *plot.Plot, leg *plot.Legend, label string, xys plotter.XYs, sty draw.GlyphStyle) error {
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("plot %s: %w", label, err)
	}
	sc.GlyphStyle = sty
	if len(xys) > 0 {
		p.Add(sc)
	}
	leg.Add(label, sc)
	return nil
}
