// Package prompt builds the messages of a run's prompt: the section type and each
// section's builder (one file per section, named after it), each profile's sections in
// order and what is cut first (profiles.go), fitting the recall into the budget (fit.go),
// what a first message brings up (topic.go), the search a proactive run recalls with
// (query.go), the escaping and fencing of untrusted text (untrusted.go) and the token
// estimates the budgets are counted in.
//
// It imports the vocabulary (brain) and the OpenAI message types, nothing else of the
// module: what it needs of cognition comes in through Config and each run's Offer, and
// brain/cognition calls Build where a run starts.
package prompt

import (
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// A prompt is built from named sections, each a small builder in its own file
// (<name>.go); which sections a run's prompt has, and in what order, is its profile's
// list in profiles.go, the one place that knows it.

// Config is what of anima's configuration the prompt reads, its defaults filled in by the
// caller (cognition's Config.withDefaults).
type Config struct {
	// ContextTokens is the prompt budget, tool definitions included.
	ContextTokens int
	// PersonaName and PersonaDescription open the system prompt.
	PersonaName        string
	PersonaDescription string
	// PersonaInterests are anima's own interests, offered to bring up when nothing of the
	// person's is waiting, and shown to its dreams.
	PersonaInterests []string
	// QuietHours are the proactive policy's quiet hours: the brief counts the silence in
	// the person's waking time, without them (zero: none).
	QuietHours brain.QuietHours
}

// Offer is what a prompt needs of the tools its run offers: what their definitions take of
// the budget, and whether a tool is offered (the persona guides the model to some).
type Offer interface {
	Tokens() int
	Offers(name string) bool
}

// Run is what one run's prompt is built from.
type Run struct {
	Wake   brain.Wake
	Recall brain.Recall
	Now    time.Time
	Loc    *time.Location // the person's zone
	Offer  Offer          // the tools of the run's profile
}

// Builder builds prompts under one Config.
type Builder struct {
	cfg Config
}

// New returns a Builder of prompts under cfg.
func New(cfg Config) *Builder { return &Builder{cfg: cfg} }

// section is one named part of a prompt, built by text (one system message; "": the
// section is left out) or, for the turns and a chat's ask, by msgs. A fitted section is
// made from what fit kept of the recall, so it is built after the others, which the recall
// is fitted around.
type section struct {
	name   string
	fitted bool
	text   func(c *Builder, p *prompt) string
	msgs   func(c *Builder, p *prompt) []openai.ChatCompletionMessage
}

// build writes s's messages for p.
func (s section) build(c *Builder, p *prompt) []openai.ChatCompletionMessage {
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
	offer   Offer
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

// Build assembles the prompt of r within the ContextTokens budget (less what the offered
// tool definitions take): the sections of its profile (profiles.go), in order. The
// sections that do not come from the recall are built first; the recall is fitted into
// what they leave (fit.go), so the prompt does not grow with history; then, while the
// prompt is still over budget, whole sections are dropped in cutOrder.
func (c *Builder) Build(r Run) []openai.ChatCompletionMessage {
	w, rc, now := r.Wake, r.Recall, r.Now
	name, secs := profileSections(w)
	p := &prompt{offer: r.Offer, w: w, rc: rc, now: now, loc: r.Loc, profile: name,
		budget: c.cfg.ContextTokens - r.Offer.Tokens()}
	p.topic, p.topicOK = c.Topic(r)
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
	p.f = fit(rc, now, p.loc, p.budget-reserve)
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

// UserText is the text of the wake's user messages, joined by newlines.
func UserText(w brain.Wake) string {
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

// TruncateUTF8 cuts s to at most n bytes without splitting a rune.
func TruncateUTF8(s string, n int) string {
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
