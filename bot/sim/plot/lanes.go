package plot

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/anima-bot/anima/bot/sim"
)

// lane is one row of the lower panel: what happened, its mark and how many of it a step
// holds.
type lane struct {
	name  string // the tick label and the legend entry
	shape draw.GlyphDrawer
	col   color.Color
	count func(sim.PictureStep) int
}

// lanes top to bottom. The proactive lane holds the first messages that are neither
// check-ins nor follow-ups (the picture's Proactive counts check-ins too); replies
// include reminders and apologies (Other).
var lanes = []lane{
	{"messages from the person", draw.TriangleGlyph{}, colUser, func(r sim.PictureStep) int { return r.User }},
	{"anima's replies", draw.SquareGlyph{}, colReply, func(r sim.PictureStep) int { return r.Reply + r.Other }},
	{"proactive", draw.CircleGlyph{}, colProactive, func(r sim.PictureStep) int { return r.Proactive - r.Checkin }},
	{"check-in", draw.BoxGlyph{}, colCheckin, func(r sim.PictureStep) int { return r.Checkin }},
	{"follow-up", draw.PyramidGlyph{}, colFollowup, func(r sim.PictureStep) int { return r.Followup }},
	{"dream", draw.CrossGlyph{}, colDream, func(r sim.PictureStep) int { return r.Dreams }},
}

// laneY is the ordinate of lane i: the first on top.
func laneY(i int) float64 { return float64(len(lanes) - i) }

// laneMarks are the marks of lane i: one per event, at its step's time.
func laneMarks(t sim.Picture, i int) plotter.XYs {
	var xys plotter.XYs
	for _, r := range t.Steps {
		for range lanes[i].count(r) {
			xys = append(xys, plotter.XY{X: hours(t, r.At), Y: laneY(i)})
		}
	}
	return xys
}

// lanesPanel is the lower panel: one named lane per kind of event, with its marks, on
// the run's time axis. Its entries go into leg.
func lanesPanel(t sim.Picture, leg *plot.Legend) (*plot.Plot, error) {
	p := plot.New()
	p.Y.Min, p.Y.Max = 0.4, float64(len(lanes))+0.6
	ticks := make(plot.ConstantTicks, len(lanes))
	for i, l := range lanes {
		ticks[i] = plot.Tick{Value: laneY(i), Label: l.name}
	}
	p.Y.Tick.Marker = ticks
	p.X.Label.Text = fmt.Sprintf("days from %s, ticked at midnight on the person's clock and every 6 hours", t.Start.In(t.Loc).Format("Mon 2 January 2006"))
	timeAxis(p, t, true)
	if err := addBands(leg, t, p, p.Y.Min, p.Y.Max); err != nil {
		return nil, err
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color, grid.Horizontal.Width = colLane, vg.Points(0.5)
	p.Add(grid)
	for i, l := range lanes {
		sty := draw.GlyphStyle{Color: l.col, Radius: vg.Points(glyphRadius), Shape: l.shape}
		if err := addMarks(p, leg, l.name, laneMarks(t, i), sty); err != nil {
			return nil, err
		}
	}
	return p, nil
}
