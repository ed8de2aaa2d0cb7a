package innerlife

import (
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
)

// promptWords is about how many words the concerns take in a prompt.
const promptWords = 180

// Context implements plugins.Contextual: the bot's own recent journal entries (marked as
// private), the concerns it follows (at most 8 non-dormant, Active first, about 180
// words) and the chat's due check-ins. A run that shows a due check-in carries it: the
// check-in counts as asked once the run's turn is committed, whether or not the model
// chose to write — a run that stays silent judged the moment wrong, and raising the
// check-in again would nag and cost another model run. A run that fails commits nothing,
// so its check-in stays due (the neuron raises it again).
//
// Context is called once at the start of every run, so it also ends the chat's previous
// run's claim on the journal slot (that run has committed or failed by now).
func (p *Plugin) Context(w brain.Wake, now time.Time) brain.Section {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.claimed, w.Chat)
	if w.Rel.Group {
		return brain.Section{} // the inner life is kept for private chats
	}
	loc := zoneOr(w.Loc)
	sec := brain.Section{Title: "Your inner life (private; the user has not seen it): your latest journal entries, " +
		"the concerns you follow, check-ins that are due"}
	es := p.entries[w.Chat]
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		sec.Lines = append(sec.Lines, "journal, "+e.At.In(loc).Format("Mon 2 Jan 15:04")+", "+e.Kind+": "+e.Text)
	}
	cs := p.concerns[w.Chat]
	sec.Lines = append(sec.Lines, promptConcerns(cs, now, promptWords)...)
	if w.Profile == brain.ProfileDream {
		return sec
	}
	how := "proactive"
	if slices.ContainsFunc(w.Signals, func(s brain.Signal) bool { return s.Type == brain.SignalUserMessage }) {
		how = "chat"
	}
	for _, c := range cs {
		if !c.dueCheckIn(now) {
			continue
		}
		line := "due check-in: " + c.Summary + " (you planned to ask how it went, " +
			c.CheckInAt.In(loc).Format("Mon 2 Jan 15:04") + ")"
		if how == "chat" {
			line += "; weave it in naturally if it fits what they wrote"
		}
		sec.Lines = append(sec.Lines, line)
		p.shown[c.ID] = now
		sec.Intents = append(sec.Intents, change(w.Chat, checkinAsked{ID: c.ID, How: how}))
	}
	return sec
}
