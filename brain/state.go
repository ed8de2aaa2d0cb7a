package brain

import (
	"sort"
	"time"
)

// Thought is a pending thought of anima's about a chat (from a plugin or EmitThought).
type Thought struct {
	Chat    int64     `json:"chat"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
	Handled bool      `json:"handled,omitempty"`
	// Gated thoughts are anima's own initiative (a plugin's thought pressure, such as a
	// concern's check-in): they wake cognition only through the proactive gates, with the
	// wake reason Reason, and a message from the user supersedes them (the chat's run then
	// carries them, through the plugin's context section).
	Gated  bool   `json:"gated,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Ref is what the thought is about, in its source's terms (a concern id).
	Ref string `json:"ref,omitempty"`
}

// State is everything the brain's layers read: agent-wide values and one Relationship per
// chat. It is owned by the core loop's goroutine (loop.Loop); layers read and write it only
// from within Sense/Decide calls.
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

	zones map[string]*time.Location // loaded per-user zones; nil for an unknown name
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

// Location returns the zone of r's user: its override, else the state's default zone (also
// when the override is not a zone this system knows). It is the one place a user's zone is
// looked up: each override is loaded once and cached, so that a tick reads it without
// allocating. The core loop carries the answer with each wake (Wake.Loc).
func (s *State) Location(r *Relationship) *time.Location {
	if r != nil && r.Timezone != "" {
		loc, ok := s.zones[r.Timezone]
		if !ok {
			loc, _ = time.LoadLocation(r.Timezone) // nil on error: cached, falls back below
			if s.zones == nil {
				s.zones = map[string]*time.Location{}
			}
			s.zones[r.Timezone] = loc
		}
		if loc != nil {
			return loc
		}
	}
	if s.Zone == nil {
		return time.UTC
	}
	return s.Zone
}
