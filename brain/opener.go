package brain

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The opener ledger: each message anima wrote first in a chat (a proactive run that sent),
// with what kind of first message it was, what it was about, when, and whether and when
// the person answered. The prompts of runs that may write first show the last few, and
// what the next one brings up is chosen against them (ChooseTopic): never a topic of the
// last RecentOpeners.

// OpenerKind is why anima wrote first.
type OpenerKind string

// The kinds of first messages.
const (
	OpenerMissingYou OpenerKind = "missing_you" // silence grew (ReasonProactive)
	OpenerCheckin    OpenerKind = "checkin"     // a concern's planned check-in
	OpenerFollowup   OpenerKind = "followup"    // a question of anima's went unanswered
	OpenerThought    OpenerKind = "thought"     // something on anima's mind
)

// OpenerKindOf is the kind of first message a wake with reason code (and, for a due
// schedule, message kind k) writes; ok is false for a wake whose message is no opener: an
// answer, or a reminder the person asked for.
func OpenerKindOf(code string, k MessageKind) (OpenerKind, bool) {
	switch code {
	case ReasonProactive:
		return OpenerMissingYou, true
	case ReasonConcernCheckin:
		return OpenerCheckin, true
	case ReasonFollowup:
		return OpenerFollowup, true
	case ReasonThought:
		return OpenerThought, true
	case ReasonSchedule:
		if k == KindFollowup {
			return OpenerFollowup, true
		}
	}
	return "", false
}

// Words is the kind in plain words: "missing you", "a check-in", "a follow-up", "a thought".
func (k OpenerKind) Words() string {
	switch k {
	case OpenerMissingYou:
		return "missing you"
	case OpenerCheckin:
		return "a check-in"
	case OpenerFollowup:
		return "a follow-up"
	case OpenerThought:
		return "a thought"
	}
	return "a first message"
}

// Opener is one message anima wrote first.
type Opener struct {
	Kind OpenerKind `json:"kind"`
	// Topic is the model's short label of what the message is about ("her driving test");
	// empty when it gave none.
	Topic string `json:"topic,omitempty"`
	// Subject is the id of what code chose for the message to bring up (Topic.ID:
	// "interest:jazz", "checkin:<ref>"); empty when nothing was chosen.
	Subject string `json:"subject,omitempty"`
	// At is when it was delivered; Answered when the person next wrote (zero: not yet).
	At       time.Time `json:"at,omitzero"`
	Answered time.Time `json:"answered,omitzero"`
}

// LedgerSize is how many openers a relationship keeps, the newest.
const LedgerSize = 10

// RecentOpeners is how many of the last openers a topic may not repeat.
const RecentOpeners = 5

// TopicRunes bounds an opener's topic label.
const TopicRunes = 60

// RecordOpener adds o to the ledger, keeping the newest LedgerSize. The ledger is never
// changed in place: copies of the relationship (a wake's, the persister's) keep theirs.
func (r *Relationship) RecordOpener(o Opener) {
	o.Topic = CleanTopic(o.Topic)
	keep := r.Openers[max(0, len(r.Openers)-(LedgerSize-1)):]
	next := make([]Opener, 0, len(keep)+1)
	r.Openers = append(append(next, keep...), o)
}

// answerOpeners marks the unanswered openers sent by t as answered at t (a copy of
// the ledger when one changes).
func (r *Relationship) answerOpeners(t time.Time) {
	var next []Opener
	for i, o := range r.Openers {
		if !o.Answered.IsZero() || o.At.After(t) {
			continue
		}
		if next == nil {
			next = append([]Opener(nil), r.Openers...)
		}
		next[i].Answered = t
	}
	if next != nil {
		r.Openers = next
	}
}

// CleanTopic is a topic label on one line of at most TopicRunes.
func CleanTopic(s string) string {
	return TruncateRunes(strings.Join(strings.Fields(s), " "), TopicRunes)
}

// Topic is something a first message could bring up.
type Topic struct {
	// ID names it across openers ("interest:jazz", "checkin:<ref>", "event:<id>"); a
	// candidate whose ID is the Subject of a recent opener is not chosen again.
	ID string
	// Label is its short name, compared with the topics the model gave recent openers.
	Label string
	// Kind says where it comes from (the Topic* kinds): their life (a due check-in, an
	// event, how they are, a question of theirs), something anima might share, an interest.
	Kind string
	// Due marks a check-in that came due: it is chosen even when a recent opener was about
	// the same thing.
	Due bool
	// On is the day it is about (YYYY-MM-DD in the person's zone; an event's), "" without.
	On string
	// When says in words when it was said or is for ("today", "yesterday evening"), for
	// the ask; "" without.
	When string
	// Weight ranks topics of one kind, the higher first: how much it matters to the person
	// (a share's Matters, an event's nearness).
	Weight int
}

// The kinds of topics, in the order a first message prefers them: their life first (a
// check-in that came due, an event of theirs today or just past, how they are, a question
// of theirs left open), then what anima kept to share, an interest last.
const (
	TopicCheckin    = "checkin"
	TopicEvent      = "event"
	TopicHowTheyAre = "howtheyare"
	TopicQuestion   = "question"
	TopicShare      = "share"
	TopicInterest   = "interest"
)

// topicOrder is the Topic kinds by preference.
var topicOrder = []string{TopicCheckin, TopicEvent, TopicHowTheyAre, TopicQuestion, TopicShare, TopicInterest}

// TopicRank is where kind comes in topicOrder (an unknown kind after them all).
func TopicRank(kind string) int {
	for i, k := range topicOrder {
		if k == kind {
			return i
		}
	}
	return len(topicOrder)
}

// OfTheirLife reports whether t is about the person's life, not anima's own.
func (t Topic) OfTheirLife() bool { return TopicRank(t.Kind) <= TopicRank(TopicQuestion) }

// OpenerKind is the kind of first message that brings t up: a check-in for their life,
// a thought for what anima kept to share or an interest.
func (t Topic) OpenerKind() OpenerKind {
	if t.OfTheirLife() {
		return OpenerCheckin
	}
	return OpenerThought
}

// SortTopics orders ts by preference: kind (topicOrder), then Weight, the higher first;
// ties keep their order. A share that matters most to the person (Weight
// ShareMattersMax: tied to what is on their plate now) comes right after their events.
func SortTopics(ts []Topic) {
	rank := func(t Topic) int {
		if t.Kind == TopicShare && t.Weight >= ShareMattersMax {
			return 2*TopicRank(TopicHowTheyAre) - 1
		}
		return 2 * TopicRank(t.Kind)
	}
	slices.SortStableFunc(ts, func(a, b Topic) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return b.Weight - a.Weight
	})
}

// ChooseTopic picks what a first message brings up: the first of candidates, which come
// in priority order (a due check-in, then what anima might share, then its interests),
// that none of the last RecentOpeners of recent was about, by ID or label; a Due one
// whatever the openers. ok is false when every candidate was used recently.
func ChooseTopic(candidates []Topic, recent []Opener) (Topic, bool) {
	recent = recent[max(0, len(recent)-RecentOpeners):]
	for _, c := range candidates {
		if c.Due || !usedIn(c, recent) {
			return c, true
		}
	}
	return Topic{}, false
}

// usedIn reports whether one of openers was about c.
func usedIn(c Topic, openers []Opener) bool {
	label := CleanTopic(c.Label)
	for _, o := range openers {
		if c.ID != "" && o.Subject == c.ID || label != "" && strings.EqualFold(o.Topic, label) {
			return true
		}
	}
	return false
}

// OpenedWords says when an opener sent at at was, seen at now in loc: AgoWords, with the
// part of the day for the days of the last week ("on Tuesday evening").
func OpenedWords(at, now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	if days := dayDiff(at, now, loc); days >= 2 && days < 7 {
		lt := at.In(loc)
		if lt.Hour() < 5 {
			return "on " + lt.AddDate(0, 0, -1).Weekday().String() + " night"
		}
		return "on " + lt.Weekday().String() + " " + partOfDay(lt.Hour())
	}
	return AgoWords(at, now, loc)
}

// AnsweredWords says whether and when the person answered o: "they answered within the
// hour", "they answered 3 hours later", "they answered the next day", "they answered 4
// days later", "no answer yet".
func AnsweredWords(o Opener) string {
	if o.Answered.IsZero() {
		return "no answer yet"
	}
	d := o.Answered.Sub(o.At)
	switch {
	case d < time.Hour:
		return "they answered within the hour"
	case d < 2*time.Hour:
		return "they answered an hour later"
	case d < 24*time.Hour:
		return fmt.Sprintf("they answered %d hours later", int(d/time.Hour))
	case d < 48*time.Hour:
		return "they answered the next day"
	}
	return fmt.Sprintf("they answered %d days later", int(d/(24*time.Hour)))
}
