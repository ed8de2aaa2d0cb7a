package plugins

import (
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// Options are Install's optional dependencies.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: metrics are not registered
	// Store keeps the stateful plugins' buckets; nil keeps nothing (Load, Forget and
	// Search do nothing).
	Store Store
}

// Set is the installed plugins: their guarded neurons, prompt sections, state and jobs.
// Every call into a plugin goes through it, guarded.
type Set struct {
	g        *guard
	store    Store // nil: no state kept
	neurons  []brain.Neuron
	contexts []contextSource
	stateful map[string]Stateful
	order    []string // names of the stateful plugins, in list order
	jobs     []pluginJob
	reporter []namedReporter
	commands []namedCommander
	search   []namedSearchable
}

type namedSearchable struct {
	name string
	s    Searchable
}

type namedReporter struct {
	name string
	r    Reporter
}

type namedCommander struct {
	name string
	c    Commander
}

type pluginJob struct {
	plugin string
	job    Job
	hour   int
	minute int
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)

// Install registers every plugin's tools with reg (guarded: a panic becomes an error
// result, counted) and collects the rest of their capabilities. Names must be unique
// lower-case identifiers, tools must be named "<name>_<verb>" and job times "HH:MM".
func Install(reg ToolRegistry, opts Options, ps ...Plugin) (*Set, error) {
	s := &Set{g: newGuard(opts.Logger, opts.Registerer), store: opts.Store, stateful: map[string]Stateful{}}
	seen := map[string]bool{}
	for _, p := range ps {
		name := p.Name()
		if !validName.MatchString(name) {
			return nil, &Error{Plugin: name, Err: fmt.Errorf("name must match %s", validName)}
		}
		if seen[name] {
			return nil, &Error{Plugin: name, Err: fmt.Errorf("listed twice")}
		}
		seen[name] = true
		if err := s.add(reg, name, p); err != nil {
			return nil, &Error{Plugin: name, Err: err}
		}
	}
	return s, nil
}

// add registers p's tools with reg and collects the capabilities p has.
func (s *Set) add(reg ToolRegistry, name string, p Plugin) error {
	if tb, ok := p.(Toolbox); ok {
		for _, t := range tb.Tools() {
			tn := t.Spec().Name
			if len(tn) <= len(name)+1 || tn[:len(name)+1] != name+"_" {
				return fmt.Errorf("tool %q must be named %s_<verb>", tn, name)
			}
			if err := reg.Register(guardedTool{plugin: name, t: t, g: s.g}); err != nil {
				return err
			}
		}
	}
	if sn, ok := p.(Sensor); ok {
		for _, n := range sn.Neurons() {
			s.neurons = append(s.neurons, guardedNeuron{plugin: name, n: n, g: s.g})
		}
	}
	if c, ok := p.(Contextual); ok {
		s.contexts = append(s.contexts, contextSource{plugin: name, c: c, g: s.g})
	}
	if st, ok := p.(Stateful); ok {
		s.stateful[name] = st
		s.order = append(s.order, name)
	}
	if sr, ok := p.(Searchable); ok {
		s.search = append(s.search, namedSearchable{name: name, s: sr})
	}
	if r, ok := p.(Reporter); ok {
		s.reporter = append(s.reporter, namedReporter{name: name, r: r})
	}
	if c, ok := p.(Commander); ok {
		s.commands = append(s.commands, namedCommander{name: name, c: c})
	}
	if sc, ok := p.(Scheduled); ok {
		for _, j := range sc.Jobs() {
			var h, m int
			if _, err := fmt.Sscanf(j.At, "%d:%d", &h, &m); err != nil || len(j.At) != 5 || h > 23 || m > 59 || h < 0 || m < 0 {
				return fmt.Errorf("job %s: at %q is not HH:MM", j.Name, j.At)
			}
			s.jobs = append(s.jobs, pluginJob{plugin: name, job: j, hour: h, minute: m})
		}
	}
	return nil
}

// Neurons are the plugins' neurons, guarded (a panic reports nothing that tick).
func (s *Set) Neurons() []brain.Neuron { return s.neurons }

// Sections returns the plugins' prompt sections for w at now (panics are counted and the
// plugin's section left out). Safe for concurrent use.
func (s *Set) Sections(w brain.Wake, now time.Time) []brain.Section {
	var out []brain.Section
	for _, c := range s.contexts {
		if sec := c.section(w, now); len(sec.Lines) > 0 || len(sec.Intents) > 0 {
			out = append(out, sec)
		}
	}
	return out
}

// Status joins the plugins' /status lines for user in chat.
func (s *Set) Status(chat, user int64, now time.Time, loc *time.Location) string {
	return s.joinStatus(chat, user, now, loc, false)
}

// StatusDetails joins the plugins' /status details lines for user in chat: a Detailer's
// details, another Reporter's Status lines.
func (s *Set) StatusDetails(chat, user int64, now time.Time, loc *time.Location) string {
	return s.joinStatus(chat, user, now, loc, true)
}

func (s *Set) joinStatus(chat, user int64, now time.Time, loc *time.Location, details bool) string {
	out := ""
	for _, r := range s.reporter {
		line := s.status(r, chat, user, now, loc, details)
		if line == "" {
			continue
		}
		if out != "" {
			out += "\n"
		}
		out += line
	}
	return out
}

func (s *Set) status(r namedReporter, chat, user int64, now time.Time, loc *time.Location, details bool) (line string) {
	defer func() {
		if s.g.recovered(r.name, PartCommand, recover()) {
			line = ""
		}
	}()
	if d, ok := r.r.(Detailer); ok && details {
		return d.StatusDetails(chat, user, now, loc)
	}
	return r.r.Status(chat, user, now, loc)
}

// Command offers user's command in chat that the core does not know to the plugins; false
// when none owns it.
func (s *Set) Command(chat, user int64, name, arg string, now time.Time, loc *time.Location) (answer string, ok bool) {
	for _, c := range s.commands {
		func() {
			defer func() {
				if s.g.recovered(c.name, PartCommand, recover()) {
					answer, ok = "Sorry, that did not work just now.", true
				}
			}()
			answer, ok = c.c.Command(chat, user, name, arg, now, loc)
		}()
		if ok {
			return answer, true
		}
	}
	return "", false
}
