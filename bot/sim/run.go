package sim

import (
	"context"
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
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/loop"
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
	// Draw, if set, draws timeline.png (plot.Draw: anima-sim's); without it Run writes
	// the other two files.
	Draw Drawer
	// Live runs the scenario against the configuration's model endpoint (llm.base_url,
	// llm.api_key and the models), with the client `anima run` builds, instead of the
	// scripted one: every request is spent there. EstimateLive says how many to expect.
	Live bool
}

// scenarioSim is one scenario replayed through anima's real pieces, as bot.Assemble builds
// them for `anima run`: the core loop (the autonomic and aggregation layers with the
// plugins' neurons, the wake bookkeeping, the chat's queue, the turn, its commit and
// delivery), driven one step at a time (loop.Loop.Drive); cognition with its memory,
// tools and the plugins' tools and prompt sections over the scripted model's endpoint;
// the journal (plugin changes included) over a temporary bbolt store; the plugins' daily
// jobs (the inner life's dream) on the simulated clock; and the scripted user as the
// channel. It watches the loop through its seams (watch.go).
type scenarioSim struct {
	sc    Scenario
	clock *braintest.Clock // the simulated time the brain, cognition, memory and schedules read
	store *storage.Store
	st    *brain.State
	agg   brain.Aggregator
	loop  *loop.Loop
	think brain.Thinker // cognition
	jobs  *plugins.Jobs
	row   *simRow    // the step's row
	runs  []*simRun  // the step's cognition runs, in order
	model *simModel  // the scripted model; nil in a live run
	rec   *recorder  // the model client's requests
	rng   *rand.Rand // the scenario's draws: the user's and the scripted model's
	user  *simUser
	tl    *timeline
}

// Run replays sc under a simulated clock and writes timeline.csv, summary.txt and
// (with opts.Draw) timeline.png into dir (created if needed). The store is a temporary
// file, removed afterwards; nothing leaves the machine (the model is a scripted endpoint
// on 127.0.0.1) unless opts.Live. The same configuration, scenario and seed give the same
// files with the scripted model.
func Run(ctx context.Context, cfg config.Config, sc Scenario, dir string, opts Options) (Result, error) {
	tl, err := runScenario(ctx, cfg, sc, opts)
	if err != nil {
		return Result{}, err
	}
	if err := tl.write(dir, opts.Draw); err != nil {
		return Result{}, err
	}
	return tl.result(), nil
}

// runScenario replays sc and returns what happened, step by step.
func runScenario(ctx context.Context, cfg config.Config, sc Scenario, opts Options) (*timeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var tl *timeline
	err := withStore(func(store *storage.Store) error {
		s, err := newScenarioSim(cfg, sc, store, opts.Live)
		if err != nil {
			return err
		}
		if s.model != nil {
			defer s.model.Close()
		}
		if err := s.run(ctx, newProgress(opts.Progress, opts.Now)); err != nil {
			return err
		}
		if s.model != nil {
			if v := s.model.violations(); len(v) > 0 {
				return fmt.Errorf("sim: the model endpoint saw invalid requests: %v", v)
			}
		}
		tl = s.tl
		tl.requests, tl.requestBytes = s.rec.counts()
		return nil
	})
	return tl, err
}

// withStore runs f over a store in a temporary file, removed afterwards. The file
// outlives no crash, so its commits skip the fsync (NoSync): a replay waits for no disk
// (the six shipped scenarios' 1,416 fdatasyncs, 0.55 s on the test machine's ext4).
func withStore(f func(*storage.Store) error) error {
	tmp, err := os.MkdirTemp("", "anima-sim-")
	if err != nil {
		return fmt.Errorf("sim store: %w", err)
	}
	defer os.RemoveAll(tmp)
	store, err := storage.Open(filepath.Join(tmp, "anima.db"), storage.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer store.Close()
	return f(store)
}

// newScenarioSim builds the pieces through bot.Assemble, as `anima run` does, on the
// simulated clock with the scripted model, or with the configuration's (live).
func newScenarioSim(cfg config.Config, sc Scenario, store *storage.Store, live bool) (*scenarioSim, error) {
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
	s := &scenarioSim{sc: sc, clock: braintest.NewClock(start), store: store, rec: &recorder{}, rng: rng}

	// The client `anima run` builds (bot.Assemble's), its requests counted and read.
	url, key, model := cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal(), ""
	if live {
		model = fmt.Sprintf("%s and %s at %s", cfg.LLM.FastModel, cfg.LLM.SmartModel, brain.RedactURL(url))
	} else {
		if s.model, err = newSimModel(sc.Model, sc.User); err != nil {
			return nil, err
		}
		url, key = s.model.URL(), "sim"
	}
	parts, err := bot.Assemble(cfg, store, bot.Options{Clock: s.clock, Logger: log, Seed: sc.Seed,
		LLM: cognition.NewClientThrough(url, key, cfg.LLM.RequestTimeout.Std(), s.rec.wrap)})
	if err != nil {
		if s.model != nil {
			s.model.Close()
		}
		return nil, err
	}
	s.think = parts.Cognition
	pol := parts.Policy // the scenario's seed picks the timing jitter too: a run repeats
	s.agg, s.st = parts.Aggregator, parts.State
	s.jobs = parts.Plugins.Jobs(dreamer{s}, parts.Journal, zone, chatsOf(s.st), func(ctx context.Context, intents []brain.Intent) error {
		return s.loop.Apply(ctx, intents) // built below; applied at the next Drive
	})
	s.st.Upsert(brain.Relationship{Chat: simChat, User: simChat, Name: sc.User.Name, Timezone: sc.User.Timezone})
	deps := parts.LoopDeps()
	deps.Thinker, deps.Journal = thinker{s}, journal{TurnJournal: parts.Journal, s: s}
	s.loop = loop.New(loop.NewInbox(), sender{s}, bot.LoopConfig(cfg, false), deps)
	s.user = newSimUser(sc.User, rng, userZone, start, sc.Days, simChat)
	s.tl = newTimeline(sc, pol, userZone, start)
	s.tl.own = s.user.own
	s.tl.model = model
	return s, nil
}

// run steps the brain through the scenario's days.
func (s *scenarioSim) run(ctx context.Context, bar *progress) error {
	start, step := s.clock.Now(), s.sc.Step.Std()
	end := s.user.dayStart(s.sc.Days + 1)
	total := int(end.Sub(start) / step)
	for i, now := 0, start; now.Before(end); i, now = i+1, now.Add(step) {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.clock.Set(now)
		s.user.now = now
		row := s.tl.add(now, simChat)
		s.row, s.runs = row, s.runs[:0]
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
		before, _ := s.rec.counts()
		s.loop.Drive(ctx, now, sigs)
		after, _ := s.rec.counts()
		row.modelCalls += after - before
		s.sent()
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

// dreamer is the thinker the plugins' jobs run cognition through: it scripts the model
// for a dream and records the run (and its model calls) in the step's row.
type dreamer struct{ s *scenarioSim }

func (d dreamer) Think(ctx context.Context, w brain.Wake) (brain.Outcome, error) {
	s := d.s
	before, _ := s.rec.counts()
	if s.model != nil {
		s.model.prepareDream(s.user.day(s.clock.Now()))
	}
	out, err := s.think.Think(ctx, w)
	after, _ := s.rec.counts()
	s.row.modelCalls += after - before
	s.row.dreams++
	s.tl.dream(s.clock.Now(), w.Reason)
	if err != nil {
		s.row.failed++
	}
	return out, err
}
