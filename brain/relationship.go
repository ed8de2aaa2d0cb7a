package brain

import "time"

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
	// ProactiveWakes counts every proactive wake of the chat (check-ins and follow-ups
	// included): the index of the next one picks its timing jitter.
	ProactiveWakes int `json:"proactive_wakes,omitempty"`
	// Rhythm is when the user is usually around, learned from the times of their messages
	// (empty for a group, and in a record stored before profiles existed).
	Rhythm Rhythm `json:"rhythm,omitzero"`
	// Answering is set while the user is in a conversation that anima's first contact
	// opened: its messages are not the user's own rhythm (see OwnMessage).
	Answering bool `json:"answering,omitempty"`
	// Voice is each person's own choice of voice replies (/voice on|off), by user: one
	// entry in a private chat, one per member who chose in a group (voice.go).
	Voice map[int64]VoicePref `json:"voice,omitempty"`
	// GroupVoice is set when a group turned voice replies on; a group gets text otherwise.
	GroupVoice bool `json:"group_voice,omitempty"`
	// Openers is the opener ledger (opener.go): the last LedgerSize messages anima wrote
	// first, oldest first. Replaced, never changed in place.
	Openers []Opener `json:"openers,omitempty"`
	// Self is something of anima's own (self.go), from the dream; nil without any. A
	// pointer, never changed in place: the struct an idle tick walks stays its size.
	Self *Self `json:"self,omitempty"`
}

// OwnMessage reports whether a message the user writes at t (in their zone loc; before
// MarkUserMessage records it) tells their rhythm, and tracks the conversations anima's
// first contact opens. An answer to anima's unanswered proactive message, and every
// message of the conversation it opens until a silence of RhythmAnswerWindow, tell when
// anima wrote: learning from them would teach anima its own schedule back. Unless it
// falls in an hour the user has been seen in (Rhythm.Seen): anima wrote in their hours,
// and the answer only confirms them (without it, a first message sent where they are
// usually around would hide their own messages from the profile). A message after a
// silence of RhythmAnswerWindow is their own even when it answers an opener: they came
// when they are around (a morning opener answered in the afternoon tells the afternoon;
// without this, a kind of day anima wrote first on before it knew it is never learned).
func (r *Relationship) OwnMessage(t time.Time, loc *time.Location) bool {
	switch {
	case t.Sub(r.LastExchange()) >= RhythmAnswerWindow:
		r.Answering = false
	case r.UnansweredProactive > 0:
		r.Answering = true
	}
	return !r.Answering || r.Rhythm.Seen(t, loc)
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

// MarkUserMessage records that the user wrote (or reacted) at t: habituation and the
// follow-up reset, a dormant relationship wakes up, the openers before t are answered.
func (r *Relationship) MarkUserMessage(t time.Time) {
	if t.After(r.LastUserMsg) {
		r.LastUserMsg = t
	}
	r.answerOpeners(t)
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
	r.ProactiveWakes++
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
