package cognition

import (
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// BuildMessages assembles the prompt of a run for w at now, within the ContextTokens budget
// (less what the profile's tool definitions take): the system prompt, the recalled facts,
// summary and memories wrapped as untrusted data, the recent turns, and the user's new
// message(s). What of the recall fits is decided by fit (fit.go); so the prompt does not
// grow with history.
func (c *Cognition) BuildMessages(w brain.Wake, rc brain.Recall, now time.Time) []openai.ChatCompletionMessage {
	budget := c.cfg.ContextTokens - c.offer(profileOf(w)).tokens

	system := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: c.systemPrompt(w, now)}
	if len(rc.Turns) > 0 {
		system.Content += "\n" + turnTagNote
	}
	final := c.finalMessage(w, budget)
	avail := budget - msgTokens(system) - msgTokens(final) - 64 // 64: the data block's frame
	files := fileBlock(w, max(budget/3, 64)*4)
	if files != "" {
		avail -= tokens(files) + 4
	}
	f := c.fit(w, rc, now, avail)

	msgs := make([]openai.ChatCompletionMessage, 0, len(rc.Turns)-f.first+5)
	msgs = append(msgs, system)
	about := "the user"
	if w.Rel.Group {
		about = quote(w.UserName()) + " (told in this group)"
	}
	if data := dataBlock(about, f.facts, f.summary, f.memories); data != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: data})
	}
	if f.sections != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: f.sections})
	}
	msgs = appendTurns(msgs, w, rc.Turns, &f)
	if files != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: files})
	}
	return append(msgs, final)
}

// finalMessage is the prompt's last message: the user's new message(s), or, for a wake
// without one, what the run is for (a dream's reflection, a proactive run's choice).
func (c *Cognition) finalMessage(w brain.Wake, budget int) openai.ChatCompletionMessage {
	if text := userText(w); text != "" {
		return userMessage(w, text, budget)
	}
	if profileOf(w) == brain.ProfileDream {
		return dreamMessage(w)
	}
	return c.proactiveMessage(w)
}

// userMessage is the user's new text as the prompt's last message, with the photos of
// this turn; a text longer than half the budget is cut (its start kept).
func userMessage(w brain.Wake, text string, budget int) openai.ChatCompletionMessage {
	if limit := max(budget/2, 64) * 4; len(text) > limit {
		text = truncateUTF8(text, limit) + " […]"
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
	return final
}

// dreamMessage asks a dream run for its nightly reflection.
func dreamMessage(w brain.Wake) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: "This is your private " +
		"nightly reflection about your conversations with " + quote(w.UserName()) + ": " + quote(reasonText(w)) + "." +
		"\nNothing you write here reaches them. Read the day's conversation, your journal and the concerns " +
		"above; use the tools to write one short digest journal entry (kind reflection), to open concerns for " +
		"what the day's conversation implied that no concern follows yet (an upcoming event, a worry, a plan; " +
		"with a check-in time when there is one), to touch or close concerns, to fold the journal entries listed " +
		"to fold into a few themes, and to remember what matters. Then answer with an empty response."}
}

// proactiveMessage asks a run without a user message whether to write, and how.
func (c *Cognition) proactiveMessage(w brain.Wake) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: "No new message from " +
		quote(w.UserName()) + ". You were woken because: " + quote(reasonText(w)) + "." +
		"\nDecide whether writing now would be welcome. If you write, be brief and specific: pick up " +
		"something from your memories or your last conversation, or follow up on what you promised; " +
		"never a bare \"how are you?\", never a repeat of something you said recently. " +
		c.interestsLine(w) + "If you have nothing worth saying, answer with an empty response."}
}

// appendTurns appends the turns f kept, each marked with its time, a group member's
// labelled with their name; empty turns are left out.
func appendTurns(msgs []openai.ChatCompletionMessage, w brain.Wake, turns []brain.Turn, f *fitted) []openai.ChatCompletionMessage {
	for i, t := range turns[f.first:] {
		role := openai.ChatMessageRoleUser
		if t.Role == "assistant" {
			role = openai.ChatMessageRoleAssistant
		}
		if strings.TrimSpace(t.Text) == "" {
			continue
		}
		content := t.Text
		if w.Rel.Group && role == openai.ChatMessageRoleUser && t.Name != "" {
			content = labelled(t.Name, content)
		}
		content = f.tags.tag(f.first+i) + content
		msgs = append(msgs, openai.ChatCompletionMessage{Role: role, Content: content})
	}
	return msgs
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

func reasonText(w brain.Wake) string {
	if w.Reason.Text != "" {
		return w.Reason.Text
	}
	if w.Reason.Code != "" {
		return w.Reason.Code
	}
	return "unspecified"
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
