package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// statusDetailsHint ends the plain /status.
const statusDetailsHint = "(/status details shows the numbers behind this.)"

// statusReply answers /status (in plain words) and /status details (the numbers: the
// relationship's state, the gates, the plugins' details), in a group only about the
// sender's own items.
func (c *commands) statusReply(sig brain.Signal, view loop.CommandView, arg string) string {
	switch strings.ToLower(arg) {
	case "":
		text := c.plainStatus(view)
		if c.plugins != nil {
			if more := c.plugins.Status(sig.Chat, sig.User, view.Now, view.Loc); more != "" {
				text += "\n\n" + more
			}
		}
		return text + "\n\n" + statusDetailsHint
	case "details":
		text := c.status(view)
		if line := c.voiceDetails(view.Rel, sig.User); line != "" {
			text += "\n" + line
		}
		if c.plugins != nil {
			if more := c.plugins.StatusDetails(sig.Chat, sig.User, view.Now, view.Loc); more != "" {
				text += "\n\n" + more
			}
		}
		return text
	}
	return "Send /status, or /status details for the numbers behind it."
}

// plainStatus says in a person's words how things stand between anima and the chat's
// user: when we last talked and how much of their waking time that is, when they usually
// write (the words of the prompt's brief, brain/brief.go), whether anima waits for an answer, when it would probably
// write first (the aggregator's NextProactive, in words relative to the user's zone),
// a hold-back the user asked for, and the quiet hours; outside tools (MCP servers) that
// are down, and a model outage, first.
func (c *commands) plainStatus(v loop.CommandView) string {
	rel, loc := v.Rel, v.Loc
	if loc == nil {
		loc = time.UTC
	}
	clock := func(t time.Time) string {
		return brain.WhenWords(t, v.Now, loc) + " (" + t.In(loc).Format("15:04") + ")"
	}
	var lines []string
	if c.outage != nil {
		if since, down := c.outage.Outage(); down {
			lines = append(lines, fmt.Sprintf("I can't reach my thoughts right now (since %s); I'm keeping your messages and "+
				"will answer them as soon as I can.", since.In(loc).Format("15:04")))
		}
	}
	if line := mcpDown(c.mcp, v.Now); line != "" {
		lines = append(lines, line)
	}
	if last := rel.LastExchange(); !last.IsZero() {
		lines = append(lines, "We last talked "+brain.SilenceWords(last, v.Now, loc, c.policy.QuietHours, &rel.Rhythm)+".")
	}
	if !rel.Group {
		if r := brain.RhythmWords(&rel.Rhythm); r != "" {
			lines = append(lines, "You usually write "+r+".")
		} else {
			lines = append(lines, "I don't know yet when you usually write.")
		}
	}
	if rel.Status == brain.StatusAwaitingAnswer {
		lines = append(lines, "I asked you something and I'm waiting for your answer.")
	}
	switch {
	case !c.policy.Enabled || c.policy.MaxPerDay == 0 || rel.Group:
		lines = append(lines, "I don't write first in this chat; I'm here whenever you write.")
	case rel.Dormant:
		lines = append(lines, "I won't write first until you write to me.")
	default:
		for _, a := range v.Acks {
			if a.Key == brain.AckKey(brain.SignalSocialPressure, rel.Chat) && a.Kind == brain.AckDeferred && a.Until.After(v.Now) {
				lines = append(lines, "You asked me to hold back until "+clock(a.Until)+", so I won't write first before then.")
			}
		}
		next, ok := c.next.NextProactive(v.Now, &rel, loc, v.Acks)
		switch {
		case ok && rel.UnansweredProactive > 0:
			lines = append(lines, "I've thought of writing to you since you last wrote, so I'm giving you more room: "+
				"if we don't talk before, I'd probably write "+brain.WhenWords(next, v.Now, loc)+".")
		case ok:
			lines = append(lines, "If we don't talk before, I'd probably write "+brain.WhenWords(next, v.Now, loc)+".")
		default:
			lines = append(lines, "I have no reason to write first for now.")
		}
		if q := c.policy.QuietHours; !q.IsZero() {
			from, to, _ := strings.Cut(q.String(), "-")
			lines = append(lines, "I never write first between "+from+" and "+to+" your time.")
		}
	}
	return strings.Join(lines, "\n")
}

// status is /status details: the numbers behind the plain /status (statusReply).
func (c *commands) status(v loop.CommandView) string {
	var b strings.Builder
	rel := v.Rel
	loc := v.Loc
	if loc == nil {
		loc = time.UTC
	}
	fmt.Fprintf(&b, "Your time: %s (%s).\n", v.Now.In(loc).Format("Mon 2 Jan 15:04"), loc)
	if c.outage != nil {
		if since, down := c.outage.Outage(); down {
			fmt.Fprintf(&b, "I can't reach my thoughts (the language model) since %s (%s ago); I keep your messages and answer them as soon as it is back.\n",
				since.In(loc).Format("Mon 15:04"), brain.Duration(v.Now.Sub(since)))
		}
	}
	if line := mcpDown(c.mcp, v.Now); line != "" {
		b.WriteString(line + "\n")
	}
	if last := rel.LastExchange(); !last.IsZero() {
		fmt.Fprintf(&b, "We last talked %s ago.\n", brain.Duration(v.Now.Sub(last)))
	}
	fmt.Fprintf(&b, "Conversation: %s.\n", statusWords(rel.Status))
	fmt.Fprintf(&b, "How much I miss talking to you: %.0f%%.\n", rel.SocialPressure*100)
	if rel.UnansweredProactive > 0 {
		fmt.Fprintf(&b, "Since you last wrote I've been about to write first %d time(s), so I now wait longer before doing it again.\n", rel.UnansweredProactive)
	}
	if q := c.policy.QuietHours; !q.IsZero() {
		fmt.Fprintf(&b, "Quiet hours: %s your time.\n", strings.Replace(q.String(), "-", "–", 1))
	}
	for _, a := range v.Acks {
		if a.Key == brain.AckKey(brain.SignalSocialPressure, rel.Chat) && a.Kind == brain.AckDeferred && a.Until.After(v.Now) {
			fmt.Fprintf(&b, "You asked me to hold back until %s.\n", a.Until.In(loc).Format("Mon 15:04"))
		}
	}
	switch {
	case !c.policy.Enabled || c.policy.MaxPerDay == 0 || rel.Group:
		b.WriteString("I don't write first in this chat.\n")
	case rel.Dormant:
		b.WriteString("I won't write first until you write to me.\n")
	default:
		if next, ok := c.next.NextProactive(v.Now, &rel, loc, v.Acks); ok {
			fmt.Fprintf(&b, "The earliest I might write first: %s.\n", next.In(loc).Format("Mon 2 Jan 15:04"))
		}
	}
	return strings.TrimSpace(b.String())
}

// statusWords says a conversation's status in a person's words.
func statusWords(s brain.ConversationStatus) string {
	if w, ok := conversationWords[s]; ok {
		return w
	}
	return "ongoing"
}

var conversationWords = map[brain.ConversationStatus]string{
	brain.StatusAwaitingAnswer: "I asked you something and I'm waiting for your answer",
	brain.StatusClosed:         "we wrapped up",
	brain.StatusIdle:           "quiet",
}
