package plot

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/anima-bot/anima/bot/sim"
)

// shading is a background band: the steps for which in holds.
type shading struct {
	label string
	col   color.Color
	in    func(sim.PictureStep) bool
}

var shadings = []shading{
	{"blocked: the bot can't write", colBlocked, func(r sim.PictureStep) bool { return r.Blocked }},
	{"quiet hours", colQuiet, func(r sim.PictureStep) bool { return r.Quiet }},
	{"active hours (learned so far)", colActive, func(r sim.PictureStep) bool { return r.Active }},
}

// addBands shades the panel p from ymin to ymax; with p nil it adds the legend's
// entries for the shadings the run has instead.
func addBands(leg *plot.Legend, t sim.Picture, p *plot.Plot, ymin, ymax float64) error {
	for _, s := range shadings {
		polys, err := bands(t, s.in, s.col, ymin, ymax)
		if err != nil {
			return err
		}
		if p == nil {
			if len(polys) > 0 {
				leg.Add(s.label, polys[0])
			}
			continue
		}
		for _, poly := range polys {
			p.Add(poly)
		}
	}
	return nil
}

// bands are filled rectangles from ymin to ymax over the runs of steps for which in holds.
func bands(t sim.Picture, in func(sim.PictureStep) bool, col color.Color, ymin, ymax float64) ([]*plotter.Polygon, error) {
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
		poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: ymin}, {X: x1, Y: ymin}, {X: x1, Y: ymax}, {X: x0, Y: ymax}})
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
