package cognition

import (
	"strings"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/prompt"
)

// readAnswer reads the final answer model wrote: by the rule of parseAnswer while the model
// is asked for the answer format, else by the lenient one of parseAnswerLoose (free text).
func (c *Cognition) readAnswer(model, content string) answer {
	if !c.formats(model) {
		return parseAnswerLoose(content) // the model wrote free text
	}
	return parseAnswer(content)
}

// outcome turns the final answer and the tools' intents into the run's Outcome; t is what
// the run was given to bring up (ok: something was).
func (c *Cognition) outcome(w brain.Wake, r *run, a answer, t brain.Topic, ok bool) brain.Outcome {
	status := a.Status
	if !a.statusSet && a.Response == "" && w.Rel.Status.Valid() {
		status = w.Rel.Status // saying nothing leaves the conversation where it was
	}
	out := brain.Outcome{Intents: r.intents, Status: status, Confidence: a.Confidence, Requests: r.requests}
	a.Response = prompt.StripTurnTag(a.Response)
	if a.Response != "" {
		k := c.kind(w)
		send := brain.SendMessage{
			Chat: w.Chat, Text: a.Response, Kind: k, Status: status, ReplyTo: replyTo(w), Opener: c.opener(w, k, a, t, ok),
		}
		if k == brain.KindReply {
			// A reply offered a thought to share said it only if its topic says so.
			ok = ok && r.share && a.Topic != ""
			if ok {
				send.Shared = t.Label
			}
		}
		out.Intents = append(out.Intents, send)
		out.Intents = append(out.Intents, usedShares(w, t, ok)...)
	}
	return out
}

// settle completes the Outcome of a run that answered: the sections it showed add their
// intents (a due check-in one carried belongs to the run that showed it), and the run is
// counted as sent or silent.
func (c *Cognition) settle(out brain.Outcome, profile brain.Profile, secs []brain.Section) brain.Outcome {
	for _, sec := range secs {
		out.Intents = append(out.Intents, sec.Intents...)
	}
	label := "silent"
	for _, in := range out.Intents {
		if _, ok := in.(brain.SendMessage); ok {
			label = "sent"
		}
	}
	c.m.runs.WithLabelValues(string(profile), label).Inc()
	return out
}

// kind says why a message for w is sent.
func (c *Cognition) kind(w brain.Wake) brain.MessageKind {
	switch w.Reason.Code {
	case brain.ReasonUserMessage, string(brain.SignalCommand):
		return brain.KindReply
	case brain.ReasonSchedule:
		for _, s := range w.Signals {
			if s.Type == brain.SignalScheduleDue && s.Kind == brain.KindFollowup {
				return brain.KindFollowup
			}
		}
		return brain.KindReminder
	case brain.ReasonFollowup:
		return brain.KindFollowup
	case brain.ReasonProactive, brain.ReasonThought:
		return brain.KindProactive
	}
	if prompt.UserText(w) != "" {
		return brain.KindReply
	}
	return brain.KindProactive
}

// replyTo is the platform id of the last user message of the wake.
func replyTo(w brain.Wake) int {
	for i := len(w.Signals) - 1; i >= 0; i-- {
		if s := w.Signals[i]; s.Type == brain.SignalUserMessage && s.MessageID != 0 {
			return s.MessageID
		}
	}
	return 0
}

// opener is what the ledger keeps of w's message of kind k, answered by a, which brought
// up t (ok: one was chosen): its kind (from the pick: "missing you" only without one), the
// model's topic (the chosen one's label when it gave none) and the chosen topic's id; the
// zero Opener for a message that is not a first message.
func (c *Cognition) opener(w brain.Wake, k brain.MessageKind, a answer, t brain.Topic, ok bool) brain.Opener {
	if k == brain.KindReply || k == brain.KindSystem {
		return brain.Opener{}
	}
	kind, first := brain.OpenerKindOf(w.Reason.Code, k)
	if !first {
		return brain.Opener{}
	}
	o := brain.Opener{Kind: kind, Topic: a.Topic}
	if ok {
		o.Subject = t.ID
		if o.Topic == "" {
			o.Topic = brain.CleanTopic(t.Label)
		}
		if kind == brain.OpenerMissingYou || kind == brain.OpenerThought {
			o.Kind = t.OpenerKind()
		}
	}
	return o
}

// usedShares are the intents consuming the share t (the run's pick), once a message of
// w's goes out: a thought said is not said again.
func usedShares(w brain.Wake, t brain.Topic, ok bool) []brain.Intent {
	if id, share := strings.CutPrefix(t.ID, "share:"); ok && share {
		return []brain.Intent{brain.ShareUsed{Chat: w.Chat, ID: id}}
	}
	return nil
}
