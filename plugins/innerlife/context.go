package innerlife

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// promptWords is about how many words the concerns take in a prompt.
const promptWords = 180

// Context implements plugins.Contextual: for the run's subject (w.Chat and w.User), the
// check-ins that are due (at most maxDueCheckInsRun, earliest first), the latest
// reflections (themes earlier dreams drew from entries older than a week), the bot's own
// recent journal entries (marked as private) and the concerns it follows (at most 8
// non-dormant, Active first, about 180 words). A dream's section also lists the entries it
// may fold with innerlife_reflect (older than FoldAfter, oldest first, about foldChars),
// before the latest entries, so that the budget cuts concerns first. Group runs get nothing: the inner life is kept for
// private chats, and what it keeps in a group about a member never enters the run of
// another.
//
// A run that shows a due check-in carries it: the check-in counts as asked once the run's
// turn is committed, whether or not the model chose to write — a run that stays silent
// judged the moment wrong, and raising the check-in again would nag and cost another model
// run. A run that fails commits nothing, so its check-in stays due (the neuron raises it
// again). Due check-ins beyond maxDueCheckInsRun are neither shown nor carried: they stay
// due for a later run. They come first in the section, so that the prompt's budget, which
// cuts a section's last lines first, keeps them.
//
// Context is called once at the start of every run, so it also ends the subject's previous
// run's claim on the journal slot (that run has committed or failed by now).
func (p *Plugin) Context(w brain.Wake, now time.Time) brain.Section {
	s := subjectOf(w.Chat, w.User)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.claimed, s)
	if w.Rel.Group {
		return brain.Section{}
	}
	loc := zoneOr(w.Loc)
	sec := brain.Section{Title: "Your inner life (private; the user has not seen it): check-ins that are due, " +
		"what you concluded looking back, your latest journal entries, the concerns you follow"}
	cs := p.concerns[s]
	es := p.entries[s]
	var due []*Concern
	if w.Profile != brain.ProfileDream {
		due = p.carryDue(&sec, s, w, cs, now, loc)
	}
	rs := p.reflections[s]
	for i := len(rs) - 1; i >= 0; i-- {
		sec.Lines = append(sec.Lines, reflectionLine(rs[i], loc))
	}
	if w.Profile == brain.ProfileDream {
		sec.Title = "Your inner life (private; the user has not seen it): what you concluded looking back, journal " +
			"entries older than a week to fold into themes, your latest journal entries, the concerns you follow"
		fold := p.toFold(s, now)
		if len(fold) > 0 {
			p.folding[s] = fold
		} else {
			delete(p.folding, s)
		}
		for _, e := range fold {
			sec.Lines = append(sec.Lines, "to fold: journal, "+e.At.In(loc).Format("Mon 2 Jan 15:04")+", "+e.Kind+": "+e.Text)
		}
		es = es[len(fold):]
	}
	for i := len(es) - 1; i >= max(len(es)-promptEntries, 0); i-- {
		e := es[i]
		sec.Lines = append(sec.Lines, "journal, "+e.At.In(loc).Format("Mon 2 Jan 15:04")+", "+e.Kind+": "+e.Text)
	}
	shown := make(map[string]bool, len(due))
	for _, c := range due {
		shown[c.ID] = true
	}
	said := maps.Clone(shown)
	sec.Lines = append(sec.Lines, promptConcerns(cs, shown, said, now, loc, promptWords)...)
	// The ids, of the concerns said, on their own line: the tool needs them, the
	// conversation does not.
	var named []*Concern
	for _, c := range cs {
		if said[c.ID] {
			named = append(named, c)
		}
	}
	if l := idsLine(named); l != "" {
		sec.Lines = append(sec.Lines, l)
	}
	sec.Topics = eventTopics(cs, shown, now, loc)
	return sec
}

// eventDays is how many days after an event's day it is still "just past".
const eventDays = 2

// eventTopics are the events of cs a first message could bring up at now, in loc, as
// data: a concern whose day (On) is today or at most eventDays past, not dormant, not
// shown as a due check-in (skip) and not yet asked about; once its day is past, one with
// a check-in still planned is left to the check-in. Weight is the nearness: today 3,
// yesterday 2, before 1.
func eventTopics(cs []*Concern, skip map[string]bool, now time.Time, loc *time.Location) []brain.Topic {
	var out []brain.Topic
	today := now.In(loc).Format(time.DateOnly)
	for _, c := range cs {
		if c.On == "" || skip[c.ID] || c.CheckInDone || SalienceAt(c.Touched, now) == Dormant {
			continue
		}
		on, err := time.ParseInLocation(time.DateOnly, c.On, loc)
		if err != nil {
			continue
		}
		days := int(now.In(loc).Sub(on).Hours() / 24) // 0 on the day itself
		if c.On > today || days > eventDays || c.On < today && !c.CheckInAt.IsZero() {
			continue
		}
		id := "event:" + c.ID
		if c.On < today {
			id += ":after" // asking how it went is another topic than wishing them well
		}
		out = append(out, brain.Topic{ID: id, Label: c.Summary, Kind: brain.TopicEvent, On: c.On,
			When: brain.DayWords(c.On, now, loc), Weight: 3 - min(days, 2)})
	}
	return out
}

// carryDue adds to sec the earliest due check-ins of cs (at most maxDueCheckInsRun), each
// with the intent that records it asked, and returns them (p.mu held).
func (p *Plugin) carryDue(sec *brain.Section, s subject, w brain.Wake, cs []*Concern, now time.Time, loc *time.Location) []*Concern {
	var due []*Concern
	for _, c := range cs {
		if c.dueCheckIn(now) {
			due = append(due, c)
		}
	}
	slices.SortStableFunc(due, func(a, b *Concern) int { return a.CheckInAt.Compare(b.CheckInAt) })
	if len(due) > maxDueCheckInsRun {
		due = due[:maxDueCheckInsRun]
	}
	how := "proactive"
	if slices.ContainsFunc(w.Signals, func(sig brain.Signal) bool { return sig.Type == brain.SignalUserMessage }) {
		how = "chat"
	}
	for _, c := range due {
		line := "due check-in: " + c.Summary + " (" + strings.TrimPrefix(c.words(now, loc), c.Summary+" — ") + ")"
		if how == "chat" {
			line += "; weave it in naturally if it fits what they wrote"
		}
		sec.Lines = append(sec.Lines, line)
		p.shown[c.ID] = now
		sec.Intents = append(sec.Intents, change(s.chat, s.user, checkinAsked{ID: c.ID, How: how}))
	}
	return due
}
