package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
)

// Scenario is a scripted week for `anima sim --scenario`: who the user is, when they
// write, how they treat anima's messages, and what the offline model says. It is read
// from YAML strictly: an unknown key is an error naming it.
type Scenario struct {
	Name string `yaml:"name"`
	// Days is how many local days to replay (default 7, at most 366).
	Days int `yaml:"days"`
	// Seed makes the run repeatable: the same scenario and seed give the same files.
	Seed uint64 `yaml:"seed"`
	// Start is the first local day, YYYY-MM-DD (default 2026-03-02, a Monday).
	Start string `yaml:"start"`
	// Step is the simulated time between two steps of the brain (default 1m).
	Step  config.Duration `yaml:"step"`
	User  SimUser         `yaml:"user"`
	Model SimModel        `yaml:"model"`
}

// SimUser is the scripted user.
type SimUser struct {
	Name string `yaml:"name"`
	// Timezone is the user's IANA zone (default: the configuration's user.timezone).
	Timezone string `yaml:"timezone"`
	// Writes are the times the user writes on their own.
	Writes []SimWrite `yaml:"writes"`
	// Answer is how the user treats anima's messages.
	Answer SimAnswer `yaml:"answer"`
	// QuietDays are days (1 = the first) on which the user neither writes nor answers.
	QuietDays []int `yaml:"quiet_days"`
	// Sleep is the user's nightly sleep, "HH:MM-HH:MM" in their zone ("" for none): an
	// answer that would fall inside it comes after they wake, its delay counted from then.
	Sleep brain.QuietHours `yaml:"sleep"`
	// Block, when set, is when the user blocks the bot; after it they never write again
	// and every message to them fails as blocked.
	Block *SimMoment `yaml:"block"`
	// Life is what the user tells anima on given days (an exam on Thursday, a sister
	// visiting, a bad week): the scripted model turns each into a concern and a note of
	// how they are.
	Life []SimLife `yaml:"life"`
}

// SimLife is something the user tells anima in their first message of a day: Says is
// what they write; the scripted model opens a concern about it (Concern, for the day On:
// a weekday name, today, tomorrow or YYYY-MM-DD; none without Concern) and notes how they
// are (Feeling; none without).
type SimLife struct {
	Day     int    `yaml:"day"` // 1 = the first
	Says    string `yaml:"says"`
	Concern string `yaml:"concern"`
	On      string `yaml:"on"`
	Feeling string `yaml:"feeling"`
}

// lifeOn is what the user tells anima on day (ok false: nothing).
func (u SimUser) lifeOn(day int) (SimLife, bool) {
	for _, l := range u.Life {
		if l.Day == day {
			return l, true
		}
	}
	return SimLife{}, false
}

// lifeBy is the latest thing the user told anima on day or the day before.
func (u SimUser) lifeBy(day int) (SimLife, bool) {
	if l, ok := u.lifeOn(day); ok {
		return l, true
	}
	return u.lifeOn(day - 1)
}

// SimWrite is a time of day at which the user writes first.
type SimWrite struct {
	At string `yaml:"at"` // local HH:MM
	// Jitter moves each occurrence uniformly within ±jitter.
	Jitter config.Duration `yaml:"jitter"`
	// Chance is the probability of writing on a given day (default 1).
	Chance *float64 `yaml:"chance"`
	// Days limits the rule to these days (1 = the first); empty means every day.
	Days []int `yaml:"days"`
	// Messages is how many messages the user sends in a row, a minute apart (default 1).
	Messages int `yaml:"messages"`
}

// SimAnswer is how the user answers: the chance of answering a proactive (or follow-up)
// message, the chance of writing back to a reply, and the delay of an answer.
type SimAnswer struct {
	Proactive float64         `yaml:"proactive"`
	Reply     float64         `yaml:"reply"`
	MinDelay  config.Duration `yaml:"min_delay"` // default 2m
	MaxDelay  config.Duration `yaml:"max_delay"` // default 30m
}

// SimMoment is a local time on a day of the run.
type SimMoment struct {
	Day int    `yaml:"day"` // 1 = the first
	At  string `yaml:"at"`  // local HH:MM
}

// SimModel is the offline scripted model.
type SimModel struct {
	// ReplyStatus and ProactiveStatus are the conversation status the model reports after
	// answering the user and after writing first (default active for both).
	ReplyStatus     string `yaml:"reply_status"`
	ProactiveStatus string `yaml:"proactive_status"`
	// Silent is the chance that a proactive run decides to say nothing.
	Silent float64 `yaml:"silent"`
	// Concern, when set, has the model open one inner-life concern (innerlife_concern)
	// while answering the user, so that its check-in shows later.
	Concern *SimConcern `yaml:"concern"`
}

// SimConcern is the one concern the scripted model opens: in its answer to the user's
// first message on Day, with a check-in CheckIn after that message.
type SimConcern struct {
	Day     int             `yaml:"day"`
	Summary string          `yaml:"summary"`
	CheckIn config.Duration `yaml:"check_in"`
}

// LoadScenario reads and checks the scenario at path.
func LoadScenario(path string) (Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("read scenario: %w", err)
	}
	sc, err := ParseScenario(data)
	if err != nil {
		return Scenario{}, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ParseScenario decodes a scenario strictly (unknown keys are errors), fills in the
// defaults and validates it.
func ParseScenario(data []byte) (Scenario, error) {
	var sc Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil && !errors.Is(err, io.EOF) {
		return Scenario{}, fmt.Errorf("parse scenario: %w", err)
	}
	sc.defaults()
	if err := sc.validate(); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

func (sc *Scenario) defaults() {
	if sc.Days == 0 {
		sc.Days = 7
	}
	if sc.Start == "" {
		sc.Start = "2026-03-02"
	}
	if sc.Step == 0 {
		sc.Step = config.Duration(time.Minute)
	}
	if sc.User.Name == "" {
		sc.User.Name = "Sam"
	}
	a := &sc.User.Answer
	if a.MinDelay == 0 {
		a.MinDelay = config.Duration(2 * time.Minute)
	}
	if a.MaxDelay == 0 {
		a.MaxDelay = max(a.MinDelay, config.Duration(30*time.Minute))
	}
	for i := range sc.User.Writes {
		if sc.User.Writes[i].Messages == 0 {
			sc.User.Writes[i].Messages = 1
		}
	}
	if sc.Model.ReplyStatus == "" {
		sc.Model.ReplyStatus = string(brain.StatusActive)
	}
	if sc.Model.ProactiveStatus == "" {
		sc.Model.ProactiveStatus = string(brain.StatusActive)
	}
}

func (sc *Scenario) validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if sc.Days < 1 || sc.Days > 366 {
		bad("days", "%d is out of range; want 1..366", sc.Days)
	}
	if _, err := time.Parse(time.DateOnly, sc.Start); err != nil {
		bad("start", "%q is not a date; want YYYY-MM-DD", sc.Start)
	}
	if s := sc.Step.Std(); s < time.Second || s > time.Hour {
		bad("step", "%s is out of range; want 1s..1h", s)
	}
	if sc.User.Timezone != "" {
		if _, err := time.LoadLocation(sc.User.Timezone); err != nil {
			bad("user.timezone", "%q is not an IANA zone (e.g. Europe/Berlin)", sc.User.Timezone)
		}
	}
	day := func(key string, d int) {
		if d < 1 || d > sc.Days {
			bad(key, "day %d is outside the run; want 1..%d", d, sc.Days)
		}
	}
	for i, w := range sc.User.Writes {
		key := fmt.Sprintf("user.writes[%d]", i)
		if _, err := clockTime(w.At); err != nil {
			bad(key+".at", "%s", err)
		}
		if w.Chance != nil && (*w.Chance < 0 || *w.Chance > 1) {
			bad(key+".chance", "%v is not a probability; want 0..1", *w.Chance)
		}
		if w.Jitter < 0 || w.Jitter.Std() > 6*time.Hour {
			bad(key+".jitter", "%s is out of range; want 0..6h", w.Jitter)
		}
		if w.Messages < 1 || w.Messages > 20 {
			bad(key+".messages", "%d is out of range; want 1..20", w.Messages)
		}
		for _, d := range w.Days {
			day(key+".days", d)
		}
	}
	told := map[int]bool{}
	for i, l := range sc.User.Life {
		key := fmt.Sprintf("user.life[%d]", i)
		day(key+".day", l.Day)
		if told[l.Day] {
			bad(key+".day", "day %d already has something told; one a day", l.Day)
		}
		told[l.Day] = true
		if strings.TrimSpace(l.Says) == "" {
			bad(key+".says", "is empty; want what they tell anima, one line")
		}
		if l.On != "" && strings.TrimSpace(l.Concern) == "" {
			bad(key+".on", "is set without a concern")
		}
	}
	a := sc.User.Answer
	if a.Proactive < 0 || a.Proactive > 1 {
		bad("user.answer.proactive", "%v is not a probability; want 0..1", a.Proactive)
	}
	// Below 1, so that a back-and-forth always ends.
	if a.Reply < 0 || a.Reply > 0.9 {
		bad("user.answer.reply", "%v is out of range; want 0..0.9", a.Reply)
	}
	if a.MinDelay < 0 || a.MaxDelay < a.MinDelay || a.MaxDelay.Std() > 24*time.Hour {
		bad("user.answer", "want 0 <= min_delay <= max_delay <= 24h, have %s and %s", a.MinDelay, a.MaxDelay)
	}
	for _, d := range sc.User.QuietDays {
		day("user.quiet_days", d)
	}
	if b := sc.User.Block; b != nil {
		day("user.block.day", b.Day)
		if _, err := clockTime(b.At); err != nil {
			bad("user.block.at", "%s", err)
		}
	}
	for _, f := range []struct{ key, status string }{
		{"model.reply_status", sc.Model.ReplyStatus}, {"model.proactive_status", sc.Model.ProactiveStatus},
	} {
		if !brain.ConversationStatus(f.status).Valid() {
			bad(f.key, "%q is not a status; want active, awaiting_answer, closed or idle", f.status)
		}
	}
	if c := sc.Model.Concern; c != nil {
		day("model.concern.day", c.Day)
		if strings.TrimSpace(c.Summary) == "" {
			bad("model.concern.summary", "is empty; want what the user cares about, one short line")
		}
		if c.CheckIn.Std() <= 0 {
			bad("model.concern.check_in", "%s is not after the message; want a positive duration", c.CheckIn)
		}
	}
	if sc.Model.Silent < 0 || sc.Model.Silent > 1 {
		bad("model.silent", "%v is not a probability; want 0..1", sc.Model.Silent)
	}
	return errors.Join(errs...)
}

// clockTime parses a local HH:MM into an offset from midnight.
func clockTime(s string) (time.Duration, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time of day; want HH:MM", s)
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, nil
}
