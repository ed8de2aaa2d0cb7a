package brain

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Relationship is anima's state for one allowed user's chat.
type Relationship struct {
	Chat     int64  `json:"chat"`
	User     int64  `json:"user"`
	Name     string `json:"name,omitempty"`
	Timezone string `json:"timezone,omitempty"` // IANA override of user.timezone

	LastUserMsg   time.Time          `json:"last_user_msg,omitzero"`
	LastAgentMsg  time.Time          `json:"last_agent_msg,omitzero"`
	LastProactive time.Time          `json:"last_proactive,omitzero"` // last proactive wake, said or not
	Status        ConversationStatus `json:"status,omitempty"`

	SocialPressure      float64 `json:"social_pressure"`
	UnansweredProactive int     `json:"unanswered_proactive"` // proactive messages sent since the user last wrote
	ProactiveToday      int     `json:"proactive_today"`      // proactive wakes on ProactiveDay
	ProactiveDay        string  `json:"proactive_day,omitempty"`
	// FollowupDone is set once the single awaiting_answer follow-up was made; a user
	// message resets it.
	FollowupDone bool `json:"followup_done,omitempty"`
	// Dormant is set when the user blocked the bot; a message from the user wakes it.
	Dormant bool `json:"dormant,omitempty"`
	// Group is true for group chats: anima only answers there and never writes first.
	Group bool `json:"group,omitempty"`
}

// LastExchange is the time of the last message in the chat from either side.
func (r *Relationship) LastExchange() time.Time {
	if r.LastAgentMsg.After(r.LastUserMsg) {
		return r.LastAgentMsg
	}
	return r.LastUserMsg
}

// Silence is the time since the last message in the chat from either side (0 if none yet).
func (r *Relationship) Silence(now time.Time) time.Duration {
	last := r.LastExchange()
	if last.IsZero() {
		return 0
	}
	return now.Sub(last)
}

// Thought is a pending thought of anima's about a chat (from a plugin or EmitThought).
type Thought struct {
	Chat    int64     `json:"chat"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
	Handled bool      `json:"handled,omitempty"`
}

// State is everything the brain's layers read: agent-wide values and one Relationship per
// chat. It is owned by the CoreLoop goroutine; layers read and write it only from within
// Sense/Decide calls.
type State struct {
	Energy    float64 // 0..1: drains with LLM work, recovers at night
	Alertness float64 // 0..1
	// LastActivity is the last time anything happened (a message either way).
	LastActivity time.Time
	// Zone is the default user zone (user.timezone).
	Zone *time.Location

	Rels     []*Relationship // sorted by chat for stable iteration
	byChat   map[int64]*Relationship
	Thoughts []Thought
	// LLMWork counts cognition runs since the energy neuron last looked (it drains energy).
	LLMWork int

	zones map[string]*time.Location // loaded per-user zones
}

// NewState returns a State with full energy and the given default zone.
func NewState(zone *time.Location) *State {
	if zone == nil {
		zone = time.UTC
	}
	return &State{Energy: 1, Alertness: 0.5, Zone: zone, byChat: map[int64]*Relationship{}}
}

// Rel returns the relationship of chat, or nil.
func (s *State) Rel(chat int64) *Relationship { return s.byChat[chat] }

// Upsert adds r (or replaces the relationship with the same chat) and returns the stored
// pointer.
func (s *State) Upsert(r Relationship) *Relationship {
	if s.byChat == nil {
		s.byChat = map[int64]*Relationship{}
	}
	if p, ok := s.byChat[r.Chat]; ok {
		*p = r
		return p
	}
	p := &r
	s.byChat[r.Chat] = p
	i := sort.Search(len(s.Rels), func(i int) bool { return s.Rels[i].Chat >= r.Chat })
	s.Rels = append(s.Rels, nil)
	copy(s.Rels[i+1:], s.Rels[i:])
	s.Rels[i] = p
	return p
}

// Remove deletes the relationship of chat.
func (s *State) Remove(chat int64) {
	if _, ok := s.byChat[chat]; !ok {
		return
	}
	delete(s.byChat, chat)
	for i, r := range s.Rels {
		if r.Chat == chat {
			s.Rels = append(s.Rels[:i], s.Rels[i+1:]...)
			break
		}
	}
}

// Location returns the zone of r's user: its override, else the state's default zone.
func (s *State) Location(r *Relationship) *time.Location {
	if r != nil && r.Timezone != "" {
		if loc, ok := s.zones[r.Timezone]; ok {
			return loc
		}
		if loc, err := time.LoadLocation(r.Timezone); err == nil {
			if s.zones == nil {
				s.zones = map[string]*time.Location{}
			}
			s.zones[r.Timezone] = loc
			return loc
		}
	}
	if s.Zone == nil {
		return time.UTC
	}
	return s.Zone
}

// Autonomic is the layer of cheap neurons. Sense appends the signals of noticeable changes
// to out and returns it; it must not allocate on an idle tick, never blocks and never
// calls the network.
type Autonomic interface {
	Sense(now time.Time, st *State, out []Signal) []Signal
}

// Neuron is one autonomic sensor; plugins may contribute neurons.
type Neuron interface {
	Name() string
	Check(now time.Time, st *State) (Signal, bool)
}

// Aggregator is the aggregation layer: it folds signals into buckets, keeps the
// AckRegistry and decides which chats cognition must think about.
type Aggregator interface {
	// Decide appends wakes for this tick to out and returns it. sigs are this tick's
	// signals (user messages included). It must not allocate on an idle tick.
	Decide(now time.Time, st *State, sigs []Signal, out []Wake) []Wake
	// Ack records an acknowledgement (handled, deferred, suppressed).
	Ack(a Ack)
	// ClearChat drops every ack of chat (a user message clears that user's acks).
	ClearChat(chat int64)
	// Acks lists the live acks (for persistence and /status).
	Acks(now time.Time) []Ack
}

// Pressure is the social pressure after silence for a chat whose proactive min_silence is
// minSilence: p = 1 − 2^(−silence/minSilence). It is 0 right after an exchange, 0.5 at
// minSilence, 0.75 at twice that, and tends to 1. The autonomic neuron and the
// aggregation's wake rule share this one curve.
func Pressure(silence, minSilence time.Duration) float64 {
	if silence <= 0 || minSilence <= 0 {
		return 0
	}
	return 1 - math.Exp2(-float64(silence)/float64(minSilence))
}

// Habituated is the silence proactive contact needs after n unanswered proactive
// messages: base × 2^n, and false when that overflows (contact is then out of reach).
func Habituated(base time.Duration, n int) (time.Duration, bool) {
	if n <= 0 {
		return base, true
	}
	if n >= 62 || base > math.MaxInt64>>n {
		return 0, false
	}
	return base << n, true
}

// TruncateRunes cuts s to at most n runes.
func TruncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Duration renders d compactly for people: "25m", "4h", "4h30m", "2d3h" ("0m" under a
// minute).
func Duration(d time.Duration) string {
	d = d.Round(time.Minute)
	days, d := d/(24*time.Hour), d%(24*time.Hour)
	h, m := d/time.Hour, (d%time.Hour)/time.Minute
	var b strings.Builder
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 && days == 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if b.Len() == 0 {
		return "0m"
	}
	return b.String()
}

// MarkUserMessage records that the user wrote at t: habituation and the follow-up reset,
// a dormant relationship wakes up.
func (r *Relationship) MarkUserMessage(t time.Time) {
	if t.After(r.LastUserMsg) {
		r.LastUserMsg = t
	}
	r.UnansweredProactive = 0
	r.FollowupDone = false
	r.Dormant = false
	r.Status = StatusActive
}

// MarkProactiveWake records a proactive (or follow-up) wake at now: it counts against the
// cooldown and the daily cap whether or not a message comes of it.
func (r *Relationship) MarkProactiveWake(now time.Time, loc *time.Location, followup bool) {
	if loc == nil {
		loc = time.UTC
	}
	day := now.In(loc).Format("2006-01-02")
	if r.ProactiveDay != day {
		r.ProactiveDay = day
		r.ProactiveToday = 0
	}
	r.ProactiveToday++
	r.LastProactive = now
	if followup {
		r.FollowupDone = true
	}
}

// ProactiveCount returns how many proactive wakes happened on now's local day.
func (r *Relationship) ProactiveCount(now time.Time, loc *time.Location) int {
	if loc == nil {
		loc = time.UTC
	}
	if r.ProactiveDay != now.In(loc).Format("2006-01-02") {
		return 0
	}
	return r.ProactiveToday
}

// MarkSent records a message anima sent at t; proactive ones (proactive, followup) count
// as unanswered until the user writes.
func (r *Relationship) MarkSent(t time.Time, kind MessageKind) {
	if t.After(r.LastAgentMsg) {
		r.LastAgentMsg = t
	}
	if kind == KindProactive || kind == KindFollowup {
		r.UnansweredProactive++
	}
}
