package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/storage"
)

// simChat is the scripted user's chat (and user) id.
const simChat = 1001

// Options are what Run takes besides the configuration and the scenario.
type Options struct {
	// Progress, if set, receives a progress bar once the run has taken longer than a
	// second (stderr for `anima sim`).
	Progress io.Writer
	// Now is the wall clock the progress bar reads (default time.Now).
	Now func() time.Time
}

// simClock is the simulated time the brain, cognition, memory and schedules read.
type simClock struct{ now time.Time }

func (c *simClock) Now() time.Time { return c.now }

// scenarioSim is one scenario replayed through anima's real pieces: the Stepper (autonomic
// and aggregation layers with the plugins' neurons, and the wake bookkeeping), cognition
// with its memory, tools and the plugins' tools and prompt sections over the scripted
// model's endpoint, the journal (plugin changes included) over a temporary bbolt store,
// the plugins' daily jobs (the inner life's dream) on the simulated clock, and the
// scripted user as the channel.
type scenarioSim struct {
	sc      Scenario
	clock   *simClock
	store   *storage.Store
	st      *brain.State
	agg     brain.Aggregator
	stepper *loop.Stepper
	think   brain.Thinker
	journal bot.TurnJournal
	jobs    *plugins.Jobs
	row     *simRow // the step's row, for the jobs' runs
	model   *simModel
	user    *simUser
	tl      *timeline
	log     *slog.Logger
	apology string
}

// Run replays sc under a simulated clock and writes timeline.csv,
// timeline.png and summary.txt into dir (created if needed). The store is a temporary
// file, removed afterwards; nothing leaves the machine (the model is a scripted endpoint
// on 127.0.0.1). The same configuration, scenario and seed give the same files.
func Run(ctx context.Context, cfg config.Config, sc Scenario, dir string, opts Options) (bot.SimResult, error) {
	tl, err := runScenario(ctx, cfg, sc, opts)
	if err != nil {
		return bot.SimResult{}, err
	}
	if err := tl.write(dir); err != nil {
		return bot.SimResult{}, err
	}
	return tl.result(), nil
}

// runScenario replays sc and returns what happened, step by step.
func runScenario(ctx context.Context, cfg config.Config, sc Scenario, opts Options) (*timeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "anima-sim-")
	if err != nil {
		return nil, fmt.Errorf("sim store: %w", err)
	}
	defer os.RemoveAll(tmp)
	store, err := storage.Open(filepath.Join(tmp, "anima.db"), storage.Options{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	s, err := newScenarioSim(cfg, sc, store)
	if err != nil {
		return nil, err
	}
	defer s.model.Close()
	if err := s.run(ctx, newProgress(opts.Progress, opts.Now)); err != nil {
		return nil, err
	}
	if v := s.model.violations(); len(v) > 0 {
		return nil, fmt.Errorf("sim: the model endpoint saw invalid requests: %v", v)
	}
	return s.tl, nil
}

// newScenarioSim builds the pieces, as assemble does for `anima run`, on the simulated
// clock.
func newScenarioSim(cfg config.Config, sc Scenario, store *storage.Store) (*scenarioSim, error) {
	zone, err := cfg.User.Location()
	if err != nil {
		return nil, err
	}
	userZone := zone
	if sc.User.Timezone != "" {
		if userZone, err = time.LoadLocation(sc.User.Timezone); err != nil {
			return nil, fmt.Errorf("user.timezone: %w", err)
		}
	}
	day, _ := time.Parse(time.DateOnly, sc.Start) // validated
	start := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, userZone)
	rng := rand.New(rand.NewPCG(sc.Seed, 0x616e696d61)) // "anima"
	log := slog.New(slog.DiscardHandler)
	s := &scenarioSim{sc: sc, clock: &simClock{now: start}, store: store, log: log, apology: cfg.Persona.Apology}

	if s.model, err = newSimModel(sc.Model, rng); err != nil {
		return nil, err
	}
	client := cognition.NewClient(s.model.URL(), "sim", cfg.LLM.RequestTimeout.Std())
	mem := memory.New(store, &memory.OpenAISummarizer{Client: client, Model: cfg.LLM.FastModel, MaxTokens: 400},
		memory.Options{Logger: log, Clock: s.clock})
	sched := schedule.New(store, schedule.Options{Clock: s.clock, DefaultZone: zone, Logger: log})
	plugs, err := bot.NewPlugins(cfg, store, s.clock, log, nil)
	if err != nil {
		s.model.Close()
		return nil, err
	}
	tools, err := plugs.Tools(mem, sched)
	if err != nil {
		s.model.Close()
		return nil, err
	}
	s.think = cognition.New(bot.CognitionConfig(cfg, zone), client, mem, tools,
		cognition.Options{Logger: log, Clock: s.clock, Sections: plugs.Sections})
	s.journal = plugs.Journal(mem, sched, log)
	s.jobs = plugs.Jobs(dreamer{s}, s.journal, zone, s.chats)

	pol := cfg.Proactive.Policy()
	pol.Seed = sc.Seed // the scenario's seed picks the timing jitter too: a run repeats
	agg, auto := bot.ProactiveLayers(pol, nil, plugs.Neurons()...)
	s.agg = agg
	s.st = brain.NewState(zone)
	s.st.Upsert(brain.Relationship{Chat: simChat, User: simChat, Name: sc.User.Name, Timezone: sc.User.Timezone})
	s.stepper = loop.NewStepper(loop.StepperDeps{State: s.st, Autonomic: auto, Aggregator: agg, Logger: log})
	s.user = newSimUser(sc.User, rng, userZone, start, sc.Days, simChat)
	s.tl = newTimeline(sc, pol, userZone, start)
	return s, nil
}

// run steps the brain through the scenario's days.
func (s *scenarioSim) run(ctx context.Context, bar *progress) error {
	start, step := s.clock.now, s.sc.Step.Std()
	end := s.user.dayStart(s.sc.Days + 1)
	total := int(end.Sub(start) / step)
	var wakes []brain.Wake
	for i, now := 0, start; now.Before(end); i, now = i+1, now.Add(step) {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.clock.now, s.user.now = now, now
		row := s.tl.add(now, simChat)
		sigs := s.user.due(now)
		if len(sigs) > 0 {
			recorded, err := s.store.Record("sim", sigs, 0)
			if err != nil {
				return err
			}
			sigs = recorded
			row.msgs[msgUser] += len(sigs)
		}
		pending := s.pendingCheckins()
		wakes = append(wakes[:0], s.stepper.Step(now, sigs)...)
		for _, w := range wakes {
			if err := s.turn(ctx, w, row); err != nil {
				return err
			}
		}
		s.row = row
		s.jobs.Step(ctx, now)
		if rel := s.st.Rel(simChat); rel != nil {
			row.pressure = rel.SocialPressure
			row.active = rel.Rhythm.Active(now, s.tl.loc)
		}
		s.noteDue(now, pending)
		row.blocked = s.user.blocked(now)
		bar.update(i+1, total, fmt.Sprintf("day %d/%d", s.user.day(now), s.sc.Days))
	}
	bar.done()
	// What the loop's persister would have written at a stop.
	if err := s.store.SaveRelationships([]brain.Relationship{*s.st.Rel(simChat)}); err != nil {
		return err
	}
	if err := s.store.SaveAcks(s.agg.Acks(end)); err != nil {
		return err
	}
	return nil
}

// pendingCheckins are the refs of the check-ins waiting (held back by a gate).
func (s *scenarioSim) pendingCheckins() map[string]bool {
	var refs map[string]bool
	for _, th := range s.st.Thoughts {
		if th.Gated && th.Reason == brain.ReasonConcernCheckin && th.Ref != "" {
			if refs == nil {
				refs = map[string]bool{}
			}
			refs[th.Ref] = true
		}
	}
	return refs
}

// noteDue records, for the figures, the check-ins pending after the step at now as due
// (one let out at once is recorded by its wake), and a check-in that was pending before
// the step and is gone without a check-in wake as carried: the user wrote first and the
// chat's run had it in its prompt.
func (s *scenarioSim) noteDue(now time.Time, before map[string]bool) {
	after := s.pendingCheckins()
	for _, th := range s.st.Thoughts {
		if after[th.Ref] && th.Gated && th.Reason == brain.ReasonConcernCheckin {
			if due, ok := s.tl.due[th.Ref]; !ok || th.At.Before(due) {
				s.tl.due[th.Ref] = th.At
			}
		}
	}
	for ref := range before {
		if after[ref] || s.tl.checkinWoken[ref] {
			continue
		}
		if _, ok := s.tl.carried[ref]; !ok {
			s.tl.carried[ref] = now
		}
	}
}

// chats are the relationships the plugins' jobs see: the state's, as the loop's
// persister saves them after every tick that changed them.
func (s *scenarioSim) chats() ([]brain.Relationship, error) {
	rels := make([]brain.Relationship, 0, len(s.st.Rels))
	for _, r := range s.st.Rels {
		rels = append(rels, *r)
	}
	return rels, nil
}

// dreamer is the thinker the plugins' jobs run cognition through: it scripts the model
// for a dream and records the run (and its model calls) in the step's row.
type dreamer struct{ s *scenarioSim }

func (d dreamer) Think(ctx context.Context, w brain.Wake) (brain.Outcome, error) {
	s := d.s
	calls, sums := s.model.requests()
	s.model.prepareDream()
	out, err := s.think.Think(ctx, w)
	c, m := s.model.requests()
	s.row.modelCalls += c - calls + m - sums
	s.row.dreams++
	s.tl.dream(s.clock.now, w.Reason)
	if err != nil {
		s.row.failed++
	}
	return out, err
}

// errIntent is returned when the scripted model produced an intent the simulation does
// not apply: the loop's own (brain.InLoop) intents, which its scripted tool calls never
// produce.
var errIntent = errors.New("sim: cognition returned an intent the simulation does not apply")
