// Package aggregation is the brain's gate between senses and thought: it folds signals into
// short windows (buckets), keeps the AckRegistry (handled, deferred, suppressed) and
// applies the wake rules of DESIGN §6 to decide which chats cognition must think about.
// Nothing here calls a model, and an idle tick allocates nothing.
package aggregation

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/anima-bot/anima/brain"
)

// LowEnergy is the energy below which nothing past the thought rule wakes cognition.
const LowEnergy = 0.2

// Config holds the proactive-contact settings (the `proactive:` section of the config).
type Config struct {
	// Enabled turns proactive contact (and follow-ups) on.
	Enabled bool
	// MinSilence is the silence after which anima may write first (pressure 0.5).
	MinSilence time.Duration
	// Cooldown is the least time between two proactive wakes of a chat.
	Cooldown time.Duration
	// FollowupAfter is how long an awaiting_answer question waits before its one follow-up.
	FollowupAfter time.Duration
	// QuietStart and QuietEnd are offsets from local midnight in the user's zone; the
	// window may wrap midnight (22:30–08:30); equal offsets mean no quiet hours. Offsets
	// are wall-clock readings, so a DST change moves them with the clock.
	QuietStart, QuietEnd time.Duration
	// MaxPerDay caps proactive wakes per chat per local day (0: none).
	MaxPerDay int
}

// Default returns the documented defaults: enabled, min_silence 6 h, cooldown 3 h,
// followup_after 20 min, quiet hours 22:30–08:30, max_per_day 2.
func Default() Config {
	return Config{
		Enabled:       true,
		MinSilence:    6 * time.Hour,
		Cooldown:      3 * time.Hour,
		FollowupAfter: 20 * time.Minute,
		QuietStart:    22*time.Hour + 30*time.Minute,
		QuietEnd:      8*time.Hour + 30*time.Minute,
		MaxPerDay:     2,
	}
}

// Validate names the first bad setting and says what is allowed.
func (c Config) Validate() error {
	switch {
	case c.MinSilence <= 0:
		return fmt.Errorf("proactive.min_silence = %s: must be > 0", c.MinSilence)
	case c.Cooldown < 0:
		return fmt.Errorf("proactive.cooldown = %s: must be ≥ 0", c.Cooldown)
	case c.FollowupAfter <= 0:
		return fmt.Errorf("proactive.followup_after = %s: must be > 0", c.FollowupAfter)
	case c.QuietStart < 0 || c.QuietStart >= 24*time.Hour:
		return fmt.Errorf("proactive.quiet_hours start = %s: must be within 00:00..23:59", c.QuietStart)
	case c.QuietEnd < 0 || c.QuietEnd >= 24*time.Hour:
		return fmt.Errorf("proactive.quiet_hours end = %s: must be within 00:00..23:59", c.QuietEnd)
	case c.MaxPerDay < 0:
		return fmt.Errorf("proactive.max_per_day = %d: must be ≥ 0", c.MaxPerDay)
	}
	return nil
}

// ErrQuietHours is returned (wrapped) by ParseQuietHours for a malformed spec.
var ErrQuietHours = errors.New(`quiet hours must look like "22:30-08:30"`)

// ParseQuietHours parses "HH:MM-HH:MM" into offsets from local midnight. An empty spec
// means no quiet hours.
func ParseQuietHours(spec string) (start, end time.Duration, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, fmt.Errorf("parse quiet hours %q: %w", spec, ErrQuietHours)
	}
	if start, err = parseClock(a); err == nil {
		end, err = parseClock(b)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("parse quiet hours %q: %w", spec, err)
	}
	return start, end, nil
}

func parseClock(s string) (time.Duration, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, ErrQuietHours
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, nil
}

// Options tunes the buckets.
type Options struct {
	// Window is the buckets' window (5 min).
	Window time.Duration
	// BucketTTL is how long a bucket lives without a signal (30 min).
	BucketTTL time.Duration
	// Registerer receives anima_proactive_suppressed_total (nil: not registered).
	Registerer prometheus.Registerer
}

// Aggregator is the aggregation layer. It is not safe for concurrent use: the core loop
// calls it from its own goroutine.
type Aggregator struct {
	cfg       Config
	acks      *AckRegistry
	buckets   buckets
	zones     zones
	lastPrune time.Time
	// held remembers, per chat, which gate last held back a due proactive contact, so
	// the suppression counter counts holds, not ticks.
	held       map[int64]gate
	suppressed [gateCount]prometheus.Counter
}

// gate is a proactive gate that can hold back contact that is otherwise due.
type gate uint8

const (
	gateNone gate = iota
	gateCooldown
	gateQuietHours
	gateMaxPerDay
	gateDeferred
	gateCount
)

var gateNames = [gateCount]string{"", "cooldown", "quiet_hours", "max_per_day", "deferred"}

var _ brain.Aggregator = (*Aggregator)(nil)

// New returns an aggregator; zero Options fields take their defaults. cfg is expected to
// have passed Validate.
func New(cfg Config, opts Options) *Aggregator {
	if opts.Window <= 0 {
		opts.Window = 5 * time.Minute
	}
	if opts.BucketTTL <= 0 {
		opts.BucketTTL = 30 * time.Minute
	}
	a := &Aggregator{
		cfg:     cfg,
		acks:    NewAckRegistry(),
		buckets: newBuckets(opts.Window, opts.BucketTTL),
		zones:   zones{},
		held:    map[int64]gate{},
	}
	vec := promauto.With(opts.Registerer).NewCounterVec(prometheus.CounterOpts{Name: "anima_proactive_suppressed_total",
		Help: "Proactive contacts that were due but held back, by the gate that held them (counted once per hold)."},
		[]string{"reason"})
	for g := gateCooldown; g < gateCount; g++ {
		a.suppressed[g] = vec.WithLabelValues(gateNames[g])
	}
	return a
}

// hold records which gate (gateNone: none) holds back chat's due contact.
func (a *Aggregator) hold(chat int64, g gate) {
	if a.held[chat] == g {
		return
	}
	if g == gateNone {
		delete(a.held, chat)
		return
	}
	a.held[chat] = g
	a.suppressed[g].Inc()
}

// Ack implements brain.Aggregator (see AckRegistry.Ack).
func (a *Aggregator) Ack(ack brain.Ack) { a.acks.Ack(ack) }

// ClearChat implements brain.Aggregator.
func (a *Aggregator) ClearChat(chat int64) {
	a.acks.ClearChat(chat)
	delete(a.held, chat)
}

// Acks implements brain.Aggregator.
func (a *Aggregator) Acks(now time.Time) []brain.Ack { return a.acks.Acks(now) }

// Registry returns the aggregator's AckRegistry.
func (a *Aggregator) Registry() *AckRegistry { return a.acks }

// Bucket returns the window summary of a signal type, source and chat at now.
func (a *Aggregator) Bucket(now time.Time, k BucketKey) (Bucket, bool) {
	return a.buckets.stats(now, k)
}

// Blocked reports whether the AckRegistry holds s back at now (its value counts for a
// deferral's override). Plugins and the core loop use it for signals the wake rules do not
// cover.
func (a *Aggregator) Blocked(now time.Time, s brain.Signal) bool {
	at := s.At
	if at.IsZero() {
		at = now
	}
	return a.acks.Blocked(now, s.Type, s.Chat, at, s.Value)
}

// Decide implements brain.Aggregator. Rules, first match wins per chat (DESIGN §6):
//
//  1. user_message, reaction and schedule_due signals always wake their chat. All such
//     signals of one chat in one call fold into a single wake (profile chat) whose reason
//     is the strongest present: user message, then reaction, then schedule. In a group
//     chat only one member's consecutive signals fold: a signal from another member
//     starts the chat's next wake, so every wake answers exactly one sender. Acks never
//     hold these back.
//  2. An unhandled thought wakes its chat (profile proactive), unless the chat is unknown,
//     a group or dormant; the core loop marks the chat's thoughts handled on dispatch.
//  3. With st.Energy below 0.2 nothing further wakes.
//  4. Proactive contact (see proactive) for each relationship in st.Rels order.
//
// Decide never changes relationships: the core loop records a dispatched proactive wake
// with Relationship.MarkProactiveWake.
func (a *Aggregator) Decide(now time.Time, st *brain.State, sigs []brain.Signal, out []brain.Wake) []brain.Wake {
	a.acks.tick(now)
	if now.Sub(a.lastPrune) >= time.Minute || now.Before(a.lastPrune) {
		a.lastPrune = now
		a.acks.Prune(now)
		a.buckets.prune(now)
	}
	start := len(out)

	// Rule 1.
	for i := range sigs {
		s := &sigs[i]
		a.buckets.observe(now, s)
		switch s.Type {
		case brain.SignalUserMessage, brain.SignalReaction, brain.SignalScheduleDue:
		default:
			continue
		}
		w := findLast(out[start:], s.Chat)
		if w != nil && w.Rel.Group && w.User != s.User {
			// In a group every run answers one member: another member's signal starts
			// the chat's next wake, in order.
			w = nil
		}
		if w == nil {
			out = append(out, brain.Wake{Chat: s.Chat, User: s.User, Profile: brain.ProfileChat, At: now})
			w = &out[len(out)-1]
			if rel := st.Rel(s.Chat); rel != nil {
				w.Rel = *rel
				if w.User == 0 && !rel.Group {
					w.User = rel.User
				}
			}
		}
		w.Signals = append(w.Signals, *s)
	}
	for i := start; i < len(out); i++ {
		out[i].Reason = signalReason(&out[i])
	}

	// Rule 2.
	for i := range st.Thoughts {
		t := &st.Thoughts[i]
		if t.Handled || t.Chat == 0 {
			continue
		}
		rel := st.Rel(t.Chat)
		if rel == nil || rel.Group || rel.Dormant {
			continue
		}
		if w := find(out[start:], t.Chat); w != nil {
			if w.Reason.Code == brain.ReasonThought {
				w.Signals = append(w.Signals, thoughtSignal(t))
			}
			continue
		}
		out = append(out, brain.Wake{Chat: t.Chat, User: rel.User, Reason: brain.Reason{Code: brain.ReasonThought},
			Profile: brain.ProfileProactive, Rel: *rel, At: now, Signals: []brain.Signal{thoughtSignal(t)}})
	}
	for i := start; i < len(out); i++ {
		if w := &out[i]; w.Reason.Code == brain.ReasonThought {
			w.Reason = thoughtReason(w)
		}
	}

	// Rules 3 and 4.
	if st.Energy < LowEnergy || !a.cfg.Enabled || a.cfg.MaxPerDay == 0 {
		return out
	}
	woken := len(out) > start
	for _, rel := range st.Rels {
		r, ok := a.proactive(now, st, rel)
		if !ok || (woken && find(out[start:], rel.Chat) != nil) {
			continue
		}
		out = append(out, brain.Wake{Chat: rel.Chat, User: rel.User, Reason: r,
			Profile: brain.ProfileProactive, Rel: *rel, At: now})
	}
	return out
}

// findLast returns the last wake of chat in ws, or nil.
func findLast(ws []brain.Wake, chat int64) *brain.Wake {
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].Chat == chat {
			return &ws[i]
		}
	}
	return nil
}

// find returns the first wake of chat in ws, or nil.
func find(ws []brain.Wake, chat int64) *brain.Wake {
	for i := range ws {
		if ws[i].Chat == chat {
			return &ws[i]
		}
	}
	return nil
}

func thoughtSignal(t *brain.Thought) brain.Signal {
	return brain.Signal{Type: brain.SignalThought, Source: "thought", Chat: t.Chat, Text: t.Text, At: t.At}
}

// proactive applies rule 4 to rel: every gate must pass.
//
//   - Group and dormant chats and chats without any exchange yet are skipped.
//   - Silence is rel.Silence(now), from the last message of either side. By status:
//     awaiting_answer without a follow-up yet → one follow-up once silence ≥
//     FollowupAfter (reason followup); closed → silence ≥ 4 × MinSilence × 2^unanswered;
//     otherwise (and awaiting_answer once the follow-up is done) → silence ≥
//     MinSilence × 2^unanswered and pressure ≥ 0.5 (reason proactive).
//   - The pressure is computed here from the silence (Pressure), not read from
//     rel.SocialPressure, so the decision does not depend on whether or when the
//     autonomic layer ran; it equals what the neuron writes.
//   - Cooldown since rel.LastProactive; not inside quiet hours in the user's zone; fewer
//     than MaxPerDay proactive wakes on the local day; and no ack holding back
//     ProactiveKey(chat): a handled ack made after the last exchange covers the whole
//     silence, a non-firm deferral yields to a pressure 0.25 above its value.
func (a *Aggregator) proactive(now time.Time, st *brain.State, rel *brain.Relationship) (brain.Reason, bool) {
	if rel.Group || rel.Dormant {
		return brain.Reason{}, false
	}
	last := rel.LastExchange()
	if last.IsZero() {
		return brain.Reason{}, false
	}
	silence := now.Sub(last)
	n := rel.UnansweredProactive
	followup := rel.Status == brain.StatusAwaitingAnswer && !rel.FollowupDone
	var need time.Duration
	ok := true
	switch {
	case followup:
		need = a.cfg.FollowupAfter
	case rel.Status == brain.StatusClosed:
		need, ok = brain.Habituated(4*a.cfg.MinSilence, n)
	default:
		need, ok = brain.Habituated(a.cfg.MinSilence, n)
	}
	p := brain.Pressure(silence, a.cfg.MinSilence)
	if !ok || silence < need || (!followup && p < 0.5) {
		a.hold(rel.Chat, gateNone) // not due
		return brain.Reason{}, false
	}
	local := now.In(a.zones.location(st, rel))
	switch {
	case !rel.LastProactive.IsZero() && now.Sub(rel.LastProactive) < a.cfg.Cooldown:
		a.hold(rel.Chat, gateCooldown)
	case a.quiet(local):
		a.hold(rel.Chat, gateQuietHours)
	case rel.ProactiveToday >= a.cfg.MaxPerDay && sameDay(rel.ProactiveDay, local):
		a.hold(rel.Chat, gateMaxPerDay)
	case a.acks.Blocked(now, brain.SignalSocialPressure, rel.Chat, last, p):
		a.hold(rel.Chat, gateDeferred)
	default:
		a.hold(rel.Chat, gateNone)
		return proactiveReason(rel, silence, need, p, followup), true
	}
	return brain.Reason{}, false
}

// quiet reports whether local (a time in the user's zone) is inside quiet hours.
func (a *Aggregator) quiet(local time.Time) bool {
	s, e := a.cfg.QuietStart, a.cfg.QuietEnd
	if s == e {
		return false
	}
	h, m, sec := local.Clock()
	t := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	if s < e {
		return s <= t && t < e
	}
	return t >= s || t < e
}

// sameDay reports whether day ("2006-01-02") is local's date, without allocating.
func sameDay(day string, local time.Time) bool {
	if len(day) != 10 || day[4] != '-' || day[7] != '-' {
		return false
	}
	y, m, d := local.Date()
	return atoi(day[0:4]) == y && atoi(day[5:7]) == int(m) && atoi(day[8:10]) == d
}

// atoi parses a short run of ASCII digits; -1 if there is anything else.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// zones caches the users' zone overrides so a tick does not load zone files.
type zones map[string]*time.Location

// location is st.Location(rel), with rel.Timezone loaded once.
func (z zones) location(st *brain.State, rel *brain.Relationship) *time.Location {
	if rel.Timezone == "" {
		return st.Location(nil)
	}
	loc, ok := z[rel.Timezone]
	if !ok {
		loc, _ = time.LoadLocation(rel.Timezone) // nil on error: fall back below
		z[rel.Timezone] = loc
	}
	if loc == nil {
		return st.Location(nil)
	}
	return loc
}
