package cognition

import (
	"slices"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// toolConcern is the inner life's tool for the concerns anima follows (plugins/innerlife).
const toolConcern = "innerlife_concern"

// concernGuidance tells the model when to open a concern; it is in the system prompt of a
// chat or proactive run that offers toolConcern.
const concernGuidance = "Remember on purpose: when they mention something coming up (an exam, a trip, " +
	"an appointment, a talk), a worry or a plan, open a concern with " + toolConcern + " (action open, a one-line " +
	"summary, its kind), with check_in_at when there is a moment to ask how it went (say, the evening after " +
	"the event). Touch a concern you already follow when there is news, close it when it is over; none for small talk."

// offersTool reports whether runs of profile offer the tool named name.
func (c *Cognition) offersTool(profile brain.Profile, name string) bool {
	return slices.ContainsFunc(c.offer(profile).specs, func(s brain.ToolSpec) bool { return s.Name == name })
}

// interestsLine offers anima's own interests to a run that writes first because it misses
// the user or had a thought of its own, ending in a blank; "" without interests, and for a
// check-in, a follow-up or a reminder, which have something of the user's to say.
func (c *Cognition) interestsLine(w brain.Wake) string {
	if w.Reason.Code != brain.ReasonProactive && w.Reason.Code != brain.ReasonThought {
		return ""
	}
	var qs []string
	for _, in := range c.cfg.PersonaInterests {
		if in = strings.Join(strings.Fields(in), " "); in != "" {
			qs = append(qs, quote(in))
		}
	}
	if len(qs) == 0 {
		return ""
	}
	return "When nothing of theirs is worth picking up, you may share a small thought of your own about one of " +
		"your interests (" + strings.Join(qs, ", ") + ") — the way a friend mentions what they have been " +
		"thinking about, briefly, not a lecture, and not the same one as last time. "
}
