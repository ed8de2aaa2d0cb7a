package cognition

import (
	"strings"

	"github.com/anima-bot/anima/brain"
)

// What a first message brings up is chosen here, in code, before the model runs: the
// candidates in priority order go to brain.ChooseTopic, which skips those of the last
// openers, and the run's ask names the one chosen (not the whole list of interests).

// openerTopic is what w's run is given to bring up; ok is false for a run that does not
// write first, for one that has its own subject (a follow-up, a reminder), and when every
// candidate came up in the last openers.
func (c *Cognition) openerTopic(w brain.Wake) (brain.Topic, bool) {
	switch w.Reason.Code {
	case brain.ReasonProactive, brain.ReasonThought, brain.ReasonConcernCheckin:
	default:
		return brain.Topic{}, false
	}
	if !writesFirst(w) {
		return brain.Topic{}, false
	}
	return brain.ChooseTopic(c.topicCandidates(w), w.Rel.Openers)
}

// topicCandidates is, in priority order, what a first message for w could bring up: the
// wake's due check-ins, then the other thoughts it carries (what anima might share), then
// anima's interests — unless its last openers went unanswered: then nothing of its own
// (quietAsk). Another source of things to share goes between the check-ins and the
// interests.
func (c *Cognition) topicCandidates(w brain.Wake) []brain.Topic {
	var checkins, shares []brain.Topic
	for _, s := range w.Signals {
		text := strings.Join(strings.Fields(s.Text), " ")
		if s.Type != brain.SignalThoughtPressure || text == "" {
			continue
		}
		id := s.Ref
		if id == "" {
			id = strings.ToLower(text)
		}
		if s.Detail == brain.ReasonConcernCheckin || w.Reason.Code == brain.ReasonConcernCheckin {
			checkins = append(checkins, brain.Topic{ID: "checkin:" + id, Label: text, Kind: "checkin", Due: true})
		} else {
			shares = append(shares, brain.Topic{ID: "thought:" + id, Label: text, Kind: "share"})
		}
	}
	out := append(checkins, shares...)
	if w.Rel.UnansweredProactive > 0 {
		return out
	}
	for _, in := range c.cfg.PersonaInterests {
		if in = strings.Join(strings.Fields(in), " "); in != "" {
			out = append(out, brain.Topic{ID: "interest:" + strings.ToLower(in), Label: in, Kind: "interest"})
		}
	}
	return out
}

// topicLine tells a proactive run what to bring up if it writes, ending in a blank; "" when
// nothing was chosen and anima has no interests.
func (c *Cognition) topicLine(w brain.Wake) string {
	t, ok := c.openerTopic(w)
	if !ok {
		if len(c.cfg.PersonaInterests) > 0 && (w.Reason.Code == brain.ReasonProactive || w.Reason.Code == brain.ReasonThought) {
			return "Your interests all came up in your last openers: leave them for now. "
		}
		return ""
	}
	head := "If you write, bring up " + quote(t.Label)
	switch t.Kind {
	case "checkin":
		return head + ": you planned to check in about it; ask how it went, warmly. "
	case "share":
		if len(wakeShares(w)) > 0 {
			return "" // sharedLine has named it, with what it is tied to
		}
		return head + ", which has been on your mind. "
	}
	return head + " (one of your interests) when nothing of theirs is worth picking up: a small thought of your " +
		"own about it, the way a friend mentions what they have been thinking about, briefly, not a lecture. "
}

// opener is what the ledger keeps of w's message of kind k, answered by a: its kind, the
// model's topic (the chosen one's label when it gave none) and the chosen topic's id; the
// zero Opener for a message that is not a first message.
func (c *Cognition) opener(w brain.Wake, k brain.MessageKind, a answer) brain.Opener {
	if k == brain.KindReply || k == brain.KindSystem {
		return brain.Opener{}
	}
	kind, ok := brain.OpenerKindOf(w.Reason.Code, k)
	if !ok {
		return brain.Opener{}
	}
	o := brain.Opener{Kind: kind, Topic: a.Topic}
	if t, ok := c.openerTopic(w); ok {
		o.Subject = t.ID
		if o.Topic == "" {
			o.Topic = brain.CleanTopic(t.Label)
		}
	}
	return o
}
