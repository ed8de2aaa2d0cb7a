package sim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/storage"
)

// Result is what a simulation observed.
type Result struct {
	// PerDay counts proactive wakes (model calls) per simulated local day, check-ins
	// included.
	PerDay []int
	// Checkins counts the proactive wakes that were concern check-ins, per day (nil: not
	// simulated).
	Checkins []int
	// Dreams counts dream runs (model calls too) per day (nil: not simulated).
	Dreams []int
	// Wakes lists every wake (and dream) with its local time and reason.
	Wakes []string
}

// Silent replays the configured brain under a simulated clock (`anima sim`): one user
// writes once at 09:00 local time on the first day and then stays silent for the given
// days, while anima sends a message on every proactive wake. Nothing calls a model or
// Telegram; it shows what the proactive policy of cfg does, one simulated minute per
// step (loop.Loop.Drive), with the inner life's check-ins (gated proactive wakes) and
// nightly dreams (each one model call). The parts are bot.Assemble's over a temporary
// store, removed afterwards.
func Silent(cfg config.Config, days int) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	var res Result
	err := withStore(func(store *storage.Store) (err error) {
		res, err = silent(cfg, days, store)
		return err
	})
	return res, err
}

// silent is Silent over store.
func silent(cfg config.Config, days int, store *storage.Store) (Result, error) {
	// The inner life as configured: its check-in neuron runs in the autonomic layer, and
	// its nightly dream on the simulated clock (a dream counts as one model call).
	clock := braintest.NewClock(time.Time{})
	parts, err := bot.Assemble(cfg, store, bot.Options{Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return Result{}, err
	}
	zone, st := parts.Zone, parts.State
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, zone) // a Monday
	const chat = 1
	res := Result{PerDay: make([]int, days), Checkins: make([]int, days), Dreams: make([]int, days)}
	midnight := time.Date(2026, 3, 2, 0, 0, 0, 0, zone)
	dayOf := func(now time.Time) int { return int(now.Sub(midnight).Hours() / 24) }
	listed := func(w brain.Wake) {
		res.Wakes = append(res.Wakes, fmt.Sprintf("%s  %s: %s", clock.Now().In(zone).Format("Mon 02 Jan 15:04"), w.Reason.Code, w.Reason.Text))
	}
	// The core loop runs as for `anima run`, without a model: the user's message gets a
	// reply, and every proactive wake (follow-ups and check-ins too) is counted and
	// answered with a message, which the loop delivers to nobody and books.
	counting := false
	answer := thinkFunc(func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		kind := brain.KindReply
		if counting {
			if day := dayOf(clock.Now()); day < days {
				res.PerDay[day]++
				if w.Reason.Code == brain.ReasonConcernCheckin {
					res.Checkins[day]++
				}
			}
			listed(w)
			kind = brain.KindProactive
		}
		text := fmt.Sprintf("message %d", len(res.Wakes)) // never a repeat
		return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: text, Kind: kind}}}, nil
	})
	deps := parts.LoopDeps()
	deps.Thinker = answer
	loop := loop.New(loop.NewInbox(), nobody{}, bot.LoopConfig(cfg, false), deps)
	// A dream only counts: no model.
	dream := thinkFunc(func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		if d := dayOf(clock.Now()); d < days {
			res.Dreams[d]++
		}
		listed(w)
		return brain.Outcome{Requests: 1}, nil
	})
	jobs := parts.Plugins.Jobs(dream, parts.Journal, zone, chatsOf(st), loop.Apply)

	ctx := context.Background()
	clock.Set(start.Add(time.Second)) // the reply goes out a second after the message
	loop.Drive(ctx, start, []brain.Signal{{Type: brain.SignalUserMessage, Source: "sim", Chat: chat, User: chat, Text: "hi", At: start}})
	counting = true
	end := start.AddDate(0, 0, days)
	for now := start.Add(time.Minute); now.Before(end); now = now.Add(time.Minute) {
		clock.Set(now)
		loop.Drive(ctx, now, nil)
		jobs.Step(ctx, now)
	}
	return res, nil
}

// nobody receives Silent's messages.
type nobody struct{}

func (nobody) Send(context.Context, brain.SendMessage) error { return nil }

// thinkFunc is a brain.Thinker of one function.
type thinkFunc func(context.Context, brain.Wake) (brain.Outcome, error)

func (f thinkFunc) Think(ctx context.Context, w brain.Wake) (brain.Outcome, error) { return f(ctx, w) }

// chatsOf lists the relationships the plugins' jobs see: the state's, as the loop's
// persister saves them after every tick that changed them.
func chatsOf(st *brain.State) func() ([]brain.Relationship, error) {
	return func() ([]brain.Relationship, error) {
		rels := make([]brain.Relationship, 0, len(st.Rels))
		for _, r := range st.Rels {
			rels = append(rels, *r)
		}
		return rels, nil
	}
}

// Print writes a silent run's result for people.
func Print(w io.Writer, res Result) { printPerDay(w, res, "silent days") }

// printPerDay lists the wakes and the per-day table of proactive model calls; days says
// what kind of days they were.
func printPerDay(w io.Writer, res Result, days string) {
	for _, line := range res.Wakes {
		fmt.Fprintln(w, line)
	}
	total, checkins, dreams := 0, 0, 0
	for i, n := range res.PerDay {
		line := fmt.Sprintf("day %d: %d proactive model call(s)", i+1, n)
		if i < len(res.Checkins) && res.Checkins[i] > 0 {
			line += fmt.Sprintf(" (%d check-in(s))", res.Checkins[i])
			checkins += res.Checkins[i]
		}
		if i < len(res.Dreams) {
			line += fmt.Sprintf(", %d dream(s)", res.Dreams[i])
			n += res.Dreams[i]
			dreams += res.Dreams[i]
		}
		fmt.Fprintln(w, line)
		total += n
	}
	fmt.Fprintf(w, "total: %d model calls over %d %s", total, len(res.PerDay), days)
	if res.Dreams != nil {
		fmt.Fprintf(w, " (%d check-in(s), %d dream(s))", checkins, dreams)
	}
	fmt.Fprintln(w)
}
