package cognition

import (
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// A prompt is built from named sections, each a small builder in its own file
// (prompt_<name>.go); which sections a run's prompt has, and in what order, is its
// profile's list in profiles.go, the one place that knows it.

// section is one named part of a prompt, built by text (one system message; "": the
// section is left out) or, for the turns and a chat's ask, by msgs. A fitted section is
// made from what fit kept of the recall, so it is built after the others, which the recall
// is fitted around.
type section struct {
	name   string
	fitted bool
	text   func(c *Cognition, p *prompt) string
	msgs   func(c *Cognition, p *prompt) []openai.ChatCompletionMessage
}

// build writes s's messages for p.
func (s section) build(c *Cognition, p *prompt) []openai.ChatCompletionMessage {
	if s.msgs != nil {
		return s.msgs(c, p)
	}
	if t := s.text(c, p); t != "" {
		return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: t}}
	}
	return nil
}

// prompt is what the sections of one run's prompt are built from.
type prompt struct {
	w       brain.Wake
	rc      brain.Recall
	now     time.Time
	loc     *time.Location
	profile string // the profile list's name: chat, proactive, check-in, dream
	budget  int    // tokens for the messages (ContextTokens less the tool definitions)
	f       fitted // what of the recall goes in (set before the fitted sections are built)
	// topic is what a run that may write first brings up (topicOK: one was chosen).
	topic   brain.Topic
	topicOK bool
}

// BuildMessages assembles the prompt of a run for w at now within the ContextTokens budget
// (less what the profile's tool definitions take): the sections of its profile
// (profiles.go), in order. The sections that do not come from the recall are built first;
// the recall is fitted into what they leave (fit.go), so the prompt does not grow with
// history; then, while the prompt is still over budget, whole sections are dropped in
// cutOrder.
func (c *Cognition) BuildMessages(w brain.Wake, rc brain.Recall, now time.Time) []openai.ChatCompletionMessage {
	name, secs := profileSections(w)
	p := &prompt{w: w, rc: rc, now: now, loc: c.zone(w), profile: name,
		budget: c.cfg.ContextTokens - c.offer(profileOf(w)).tokens}
	p.topic, p.topicOK = c.openerTopic(w, rc, now)
	parts := make([][]openai.ChatCompletionMessage, len(secs))
	for i, s := range secs {
		if !s.fitted {
			parts[i] = s.build(c, p)
		}
	}
	reserve := 64 // the frames of the data blocks
	if len(rc.Turns) > 0 {
		reserve += 4 + tokens(turnNote(rc.Turns)) // the turns' note on their time marks
	}
	for _, m := range parts {
		reserve += EstimateTokens(m)
	}
	p.f = c.fit(w, rc, now, p.budget-reserve)
	for i, s := range secs {
		if s.fitted {
			parts[i] = s.build(c, p)
		}
	}
	cut(secs, parts, p.budget)
	n := 0
	for _, m := range parts {
		n += len(m)
	}
	msgs := make([]openai.ChatCompletionMessage, 0, n)
	for _, m := range parts {
		msgs = append(msgs, m...)
	}
	return msgs
}

// cut drops whole sections, in cutOrder, while the prompt's parts are over budget.
func cut(secs []section, parts [][]openai.ChatCompletionMessage, budget int) {
	total := 0
	for _, m := range parts {
		total += EstimateTokens(m)
	}
	for _, name := range cutOrder {
		if total <= budget {
			return
		}
		if i := slices.IndexFunc(secs, func(s section) bool { return s.name == name }); i >= 0 && parts[i] != nil {
			total -= EstimateTokens(parts[i])
			parts[i] = nil
		}
	}
}

// userText is the text of the wake's user messages, joined by newlines.
func userText(w brain.Wake) string {
	var parts []string
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage && strings.TrimSpace(s.Text) != "" {
			parts = append(parts, s.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func dateTag(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return "[" + t.In(loc).Format(time.DateOnly) + "] "
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// trimStart keeps the last n bytes of s (the most recent part of a summary).
func trimStart(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return "…" + s[i:]
}
