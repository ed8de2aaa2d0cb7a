package prompt

import (
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// The ask is a prompt's last section: what the run is for. A chat run's is the person's
// new message(s); a run without one is told in words why it might write and how.

var (
	chatAsk      = section{name: "the ask", msgs: (*Builder).chatAsk}
	proactiveAsk = section{name: "the ask", text: (*Builder).proactiveAsk}
	checkinAsk   = section{name: "the ask", text: (*Builder).checkinAsk}
	dreamAsk     = section{name: "the ask", text: (*Builder).dreamAsk}
)

// chatAsk is the user's new text as the prompt's last message, with the photos of this
// turn; a text longer than half the budget is cut (its start kept).
func (c *Builder) chatAsk(p *prompt) []openai.ChatCompletionMessage {
	w, text := p.w, UserText(p.w)
	if limit := max(p.budget/2, 64) * 4; len(text) > limit {
		text = TruncateUTF8(text, limit) + " […]"
	}
	if w.Rel.Group {
		text = labelled(w.UserName(), text)
	}
	final := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}
	if images := imageParts(w); len(images) > 0 {
		// The photos of this turn, as data: URLs; history keeps only their notes.
		final.MultiContent = append([]openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: text}}, images...)
		final.Content = ""
	}
	return []openai.ChatCompletionMessage{final}
}

// quietAsk is what a run that may write first is told after its openers went unanswered
// (the ledger above says which), instead of being invited to write.
const quietAsk = "They have not answered your last openers: write only if this is worth it now, keep it light, or " +
	"stay silent (an empty response)."

// proactiveAsk asks a run without a user message whether to write, and how: a follow-up
// or a reminder is about its own subject; a run that may write first is told the one thing
// chosen for it (topicLine), or, with nothing chosen, that it is quiet between you.
func (c *Builder) proactiveAsk(p *prompt) string {
	w := p.w
	var b strings.Builder
	b.WriteString("No new message from " + Quote(w.UserName()) + ".")
	switch w.Reason.Code {
	case brain.ReasonFollowup:
		b.WriteString(" You asked them something and no answer came. If a gentle nudge fits now, send one short " +
			"follow-up about that question, nothing else; if not, answer with an empty response.")
		return b.String()
	case brain.ReasonSchedule:
		b.WriteString(" Something you scheduled is due (above): say it now, briefly, in your own words.")
		return b.String()
	}
	if !p.topicOK {
		b.WriteString(" It has been quiet between you, and you may write first.")
	}
	b.WriteString(" " + c.topicLine(p))
	if w.Rel.UnansweredProactive > 0 {
		return strings.TrimSpace(b.String()) + "\n" + quietAsk
	}
	return strings.TrimSpace(b.String()) + "\nWrite only if it would be welcome now: brief, one thing, never a repeat " +
		"of something you said recently. If it would not, answer with an empty response."
}

// checkinAsk asks a run to check in on what the person cares about, as planned.
func (c *Builder) checkinAsk(p *prompt) string {
	w := p.w
	var b strings.Builder
	b.WriteString("No new message from " + Quote(w.UserName()) + ". You planned to check in about: " + thoughts(w) + ".")
	b.WriteString("\nAsk how it went (or how it is going), warmly and briefly, in your own words; if it does not fit " +
		"the moment, answer with an empty response.")
	if w.Rel.UnansweredProactive > 0 {
		b.WriteString(" Your last messages went unanswered, so keep it light.")
	}
	return b.String()
}

// dreamAsk asks a dream run for its nightly reflection.
func (c *Builder) dreamAsk(p *prompt) string {
	return "This is your nightly reflection. Read the day's conversation, your journal and the concerns " +
		"above; use the tools to write one short digest journal entry (kind reflection), to open concerns for " +
		"what the day's conversation implied that no concern follows yet (an upcoming event, a worry, a plan; " +
		"with its day in on, and a check-in time when there is one), to touch or close concerns, to fold the journal " +
		"entries listed to fold into a few themes, and to remember what matters. Then, as yourself: rewrite your own " +
		"note about the two of you with innerlife_self_note (what you have been thinking about, opinions you formed, " +
		"running jokes; keep what still matters), and keep 0 to 3 thoughts you might share when you next write first or they come back " +
		"with innerlife_share_later: first what their life calls for (what they told you, what was left open, what " +
		"did not land in your last openers), an interest of yours only when nothing of theirs does; say how much " +
		"each matters to them now (matters 1 to 3). None is fine. When you are done, stop: no answer is needed."
}

// thoughts is the texts of the wake's thoughts (what a check-in or a thought of its own is
// about), quoted and joined; "" without any.
func thoughts(w brain.Wake) string {
	var qs []string
	for _, s := range w.Signals {
		if s.Type == brain.SignalThoughtPressure {
			if t := strings.Join(strings.Fields(s.Text), " "); t != "" {
				qs = append(qs, Quote(t))
			}
		}
	}
	return strings.Join(qs, "; ")
}
