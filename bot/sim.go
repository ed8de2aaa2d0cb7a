package bot

import (
	"fmt"
	"io"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
)

// SimResult is what Simulate observed.
type SimResult struct {
	// PerDay counts proactive wakes (model calls) per simulated local day.
	PerDay []int
	// Wakes lists every wake with its local time and reason.
	Wakes []string
}

// Simulate replays the configured brain under a simulated clock: one user writes once at
// 09:00 local time on the first day and then stays silent for the given days, while anima
// sends a message on every proactive wake. Nothing calls a model or Telegram; it shows
// what the proactive policy of cfg does, one simulated minute per step.
func Simulate(cfg config.Config, days int) (SimResult, error) {
	if err := cfg.Validate(); err != nil {
		return SimResult{}, err
	}
	zone, err := cfg.User.Location()
	if err != nil {
		return SimResult{}, err
	}
	agg, auto := ProactiveLayers(cfg.Proactive.Policy(), nil)
	st := brain.NewState(zone)
	// The simulation runs only the brain's per-tick part, a Stepper: the autonomic and
	// aggregation layers over the state, and the wake bookkeeping. It leaves out the rest
	// of the CoreLoop: no inbox or channel (signals are passed in), no cognition (a wake
	// is counted and answered below as if a message went out), no commands, no delivery or
	// retries, no persistence (nothing is stored), no clock (each step is given its time).
	stepper := brain.NewStepper(brain.StepperDeps{State: st, Autonomic: auto, Aggregator: agg})

	start := time.Date(2026, 3, 2, 9, 0, 0, 0, zone) // a Monday
	const chat = 1
	stepper.Step(start, []brain.Signal{{Type: brain.SignalUserMessage, Source: "sim", Chat: chat, User: chat, Text: "hi", At: start}})
	st.Rel(chat).MarkSent(start.Add(time.Second), brain.KindReply)
	res := SimResult{PerDay: make([]int, days)}
	end := start.AddDate(0, 0, days)
	for now := start.Add(time.Minute); now.Before(end); now = now.Add(time.Minute) {
		for _, w := range stepper.Step(now, nil) {
			day := int(now.Sub(time.Date(2026, 3, 2, 0, 0, 0, 0, zone)).Hours() / 24)
			if day < days {
				res.PerDay[day]++
			}
			res.Wakes = append(res.Wakes, fmt.Sprintf("%s  %s: %s", now.In(zone).Format("Mon 02 Jan 15:04"), w.Reason.Code, w.Reason.Text))
			st.Rel(chat).MarkSent(now, brain.KindProactive)
		}
	}
	return res, nil
}

// PrintSim writes a simulation's result for people.
func PrintSim(w io.Writer, res SimResult) { PrintPerDay(w, res, "silent days") }

// PrintPerDay lists the wakes and the per-day table of proactive model calls; days says
// what kind of days they were.
func PrintPerDay(w io.Writer, res SimResult, days string) {
	for _, line := range res.Wakes {
		fmt.Fprintln(w, line)
	}
	total := 0
	for i, n := range res.PerDay {
		fmt.Fprintf(w, "day %d: %d proactive model call(s)\n", i+1, n)
		total += n
	}
	fmt.Fprintf(w, "total: %d model calls over %d %s\n", total, len(res.PerDay), days)
}
