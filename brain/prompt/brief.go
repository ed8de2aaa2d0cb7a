package prompt

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// brief is the situation in plain words, the same words /status uses (brain/brief.go):
// their local time and part of the day, when they usually write, how long since you last
// talked counted in their waking time, what about, where the conversation stands, how
// your last openers fared (a run that may write first) and how long their message waited
// (a chat run). Never a reason code nor a figure of the aggregator's.
var brief = section{name: "brief", text: (*Builder).brief}

// aboutRunes bounds the quote of the last thing said.
const aboutRunes = 80

func (c *Builder) brief(p *prompt) string {
	w, rel := p.w, &p.w.Rel
	var b strings.Builder
	b.WriteString("How things stand:")
	fmt.Fprintf(&b, "\n- Now: %s for them (%s, %s).", brain.ClockWords(p.now, p.loc),
		p.now.In(p.loc).Format("2 January 2006"), p.loc)
	if r := brain.RhythmWords(&rel.Rhythm); r != "" {
		b.WriteString("\n- They usually write " + r + ".")
	} else {
		b.WriteString("\n- When they usually write: not known yet.")
	}
	if s := brain.SilenceWords(lastTalked(p), p.now, p.loc, c.cfg.QuietHours, &rel.Rhythm); s != "" {
		b.WriteString("\n- You last talked " + s + ".")
	} else {
		b.WriteString("\n- You have not talked yet.")
	}
	if p.profile != "dream" {
		if about := lastSaid(p); about != "" {
			b.WriteString("\n- The last thing said: " + about + ".")
		}
		switch rel.Status {
		case brain.StatusAwaitingAnswer:
			b.WriteString("\n- You asked them something and are waiting for their answer.")
		case brain.StatusClosed:
			b.WriteString("\n- Your last conversation had wrapped up.")
		}
	}
	// Said once: the ledger, when it shows the openers, says which went unanswered.
	if n := rel.UnansweredProactive; n > 0 && len(rel.Openers) == 0 && (p.profile == "proactive" || p.profile == "check-in") {
		fmt.Fprintf(&b, "\n- Your last openers went unanswered: you wrote first %s since they last wrote, with no answer.",
			brain.TimesWords(n))
	}
	if d := waited(w, p.now); d >= time.Minute && p.profile == "chat" {
		fmt.Fprintf(&b, "\n- You could not be reached for a while: their message has waited %s for your answer. "+
			"Acknowledge the delay briefly.", Human(d))
	}
	if rel.Group {
		b.WriteString("\n- This is a group chat.")
	}
	return b.String()
}

// newSince is when the wake's first new message was written; zero for a run without one.
// What the brief says of the last exchange is about the time before it: the relationship
// already counts the new message as the last one.
func newSince(w brain.Wake) time.Time {
	var first time.Time
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage && !s.At.IsZero() && (first.IsZero() || s.At.Before(first)) {
			first = s.At
		}
	}
	return first
}

// lastTalked is when the chat last had a message before the wake's new ones (zero: never).
func lastTalked(p *prompt) time.Time {
	last, first := p.w.Rel.LastExchange(), newSince(p.w)
	if first.IsZero() || last.Before(first) {
		return last
	}
	for i := len(p.rc.Turns) - 1; i >= 0; i-- {
		if at := p.rc.Turns[i].At; !at.IsZero() && at.Before(first) {
			return at
		}
	}
	return time.Time{}
}

// lastSaid is the last turn of the recall before the wake's new messages, short and
// quoted: `they wrote "…"`, `you wrote "…"`; "" without one.
func lastSaid(p *prompt) string {
	first := newSince(p.w)
	for i := len(p.rc.Turns) - 1; i >= 0; i-- {
		t := p.rc.Turns[i]
		if !first.IsZero() && !t.At.Before(first) {
			continue
		}
		text := strings.Join(strings.Fields(t.Text), " ")
		if text == "" {
			continue
		}
		if cut := brain.TruncateRunes(text, aboutRunes); cut != text {
			text = cut + "…"
		}
		who := "they"
		switch {
		case t.Role == "assistant":
			who = "you"
		case p.w.Rel.Group && t.Name != "":
			who = Quote(brain.CleanName(t.Name))
		}
		if t.At.IsZero() {
			return who + " wrote " + Quote(text)
		}
		return who + " wrote " + Quote(text) + " (" + relTime(t.At, p.now, p.loc) + ")"
	}
	return ""
}

// waited is how long the oldest user message of the wake has waited for its answer.
func waited(w brain.Wake, now time.Time) time.Duration {
	var d time.Duration
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage && !s.At.IsZero() {
			d = max(d, now.Sub(s.At))
		}
	}
	return d
}

// Human renders a duration coarsely: "40 minutes", "3 hours", "2 days".
func Human(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return "a minute"
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}
