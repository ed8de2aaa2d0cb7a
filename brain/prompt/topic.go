package prompt

import (
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// What a first message brings up is chosen here, in code, before the model runs, from
// data (the wake, the recall and the topics the plugins' sections carry; never by reading
// prompt text), ranked by what matters to the person now: a check-in that came due, an
// event of theirs today or just past, a how-they-are line under two days old, a question
// of theirs left open, then what the dream kept to share (the more it matters, the
// sooner), an interest of anima's last. brain.ChooseTopic skips those of the last openers;
// the kind of the message follows from the pick ("missing you" only when nothing is
// there), and the ask names it plainly.

// lifeFresh is how old a how-they-are line or a question of theirs may be to be brought up.
const lifeFresh = 48 * time.Hour

// returnAfter is the pause (no message either side) after which the person's message is
// a return: their reply may bring up a thought anima kept to share with them.
const returnAfter = 3 * time.Hour

// questionRunes bounds the quote of a question of theirs.
const questionRunes = 120

// Topic is what r's run is given to bring up (the one its prompt asks for); ok is false
// for a run that has its own subject (a follow-up, a reminder) and when every candidate
// came up in the last openers. A chat run is offered a thought anima kept to share when
// the person comes back after a while (keptShare), nothing else.
func (c *Builder) Topic(r Run) (brain.Topic, bool) {
	w := r.Wake
	if profileName(w) == "chat" {
		return keptShare(w, r.Recall.Turns, r.Now, r.Loc)
	}
	switch w.Reason.Code {
	case brain.ReasonProactive, brain.ReasonThought, brain.ReasonConcernCheckin:
	default:
		return brain.Topic{}, false
	}
	if !WritesFirst(w) {
		return brain.Topic{}, false
	}
	return brain.ChooseTopic(c.topicCandidates(w, r.Recall, r.Now, r.Loc), w.Rel.Openers)
}

// topicCandidates is, in preference order (brain.SortTopics), what a first message for w
// could bring up at now, in loc: the person's life (the wake's due check-ins, the sections'
// events, how they are, their open questions), the thoughts anima kept to share and those
// the wake carries, and anima's interests — unless its last openers went unanswered: then
// nothing of its own but what it kept to share.
func (c *Builder) topicCandidates(w brain.Wake, rc brain.Recall, now time.Time, loc *time.Location) []brain.Topic {
	var out []brain.Topic
	shares := map[string]bool{}
	for _, s := range w.Rel.Shareable(now) {
		shares[s.ID] = true
		out = append(out, brain.Topic{ID: "share:" + s.ID, Label: s.Text, Kind: brain.TopicShare, Weight: s.Matters,
			When: brain.AgoWords(s.At, now, loc)})
	}
	for _, s := range w.Signals {
		text := strings.Join(strings.Fields(s.Text), " ")
		if s.Type != brain.SignalThoughtPressure || text == "" || shares[s.Ref] {
			continue
		}
		id := s.Ref
		if id == "" {
			id = strings.ToLower(text)
		}
		if s.Detail == brain.ReasonConcernCheckin || w.Reason.Code == brain.ReasonConcernCheckin {
			out = append(out, brain.Topic{ID: "checkin:" + id, Label: text, Kind: brain.TopicCheckin, Due: true})
		} else {
			out = append(out, brain.Topic{ID: "thought:" + id, Label: text, Kind: brain.TopicShare})
		}
	}
	if !w.Rel.Group {
		for _, sec := range rc.Sections {
			out = append(out, sec.Topics...)
		}
		out = append(out, howTheyAreTopics(w, rc, now, loc)...)
		out = append(out, questionTopics(rc.Turns, now, loc)...)
	}
	if w.Rel.UnansweredProactive == 0 {
		for _, in := range c.cfg.PersonaInterests {
			if in = strings.Join(strings.Fields(in), " "); in != "" {
				out = append(out, brain.Topic{ID: "interest:" + strings.ToLower(in), Label: in, Kind: brain.TopicInterest})
			}
		}
	}
	brain.SortTopics(out)
	return out
}

// howTheyAreTopics are the lines of how w's person is that are under lifeFresh old at now,
// newest first.
func howTheyAreTopics(w brain.Wake, rc brain.Recall, now time.Time, loc *time.Location) []brain.Topic {
	var out []brain.Topic
	for _, note := range rc.HowTheyAre {
		if note.User != 0 && w.User != 0 && note.User != w.User {
			continue
		}
		lines := brain.FreshLines(note.Lines, now)
		for i := len(lines) - 1; i >= 0; i-- {
			l := lines[i]
			text := strings.Join(strings.Fields(l.Text), " ")
			if text == "" || now.Sub(l.At) >= lifeFresh || l.At.After(now) {
				continue
			}
			out = append(out, brain.Topic{ID: "howtheyare:" + strings.ToLower(brain.CleanTopic(text)), Label: text,
				Kind: brain.TopicHowTheyAre, When: brain.AgoWords(l.At, now, loc)})
		}
	}
	return out
}

// questionTopics are the person's questions in turns no answer of anima's followed, under
// lifeFresh old at now, newest first.
func questionTopics(turns []brain.Turn, now time.Time, loc *time.Location) []brain.Topic {
	var out []brain.Topic
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		if t.Role == "assistant" {
			break // what came before it was answered
		}
		text := strings.Join(strings.Fields(t.Text), " ")
		if !strings.Contains(text, "?") || t.At.IsZero() || now.Sub(t.At) >= lifeFresh {
			continue
		}
		if cut := brain.TruncateRunes(text, questionRunes); cut != text {
			text = cut + "…"
		}
		out = append(out, brain.Topic{ID: "question:" + strings.ToLower(brain.CleanTopic(text)), Label: text,
			Kind: brain.TopicQuestion, When: brain.AgoWords(t.At, now, loc)})
	}
	return out
}

// topicLine tells a run that may write first what to bring up and how, plainly, ending in
// a blank; without a pick, to pick up the last conversation (or, when its interests all
// came up lately, to leave them).
func (c *Builder) topicLine(p *prompt) string {
	t, ok := p.topic, p.topicOK
	if !ok {
		line := "Nothing of theirs is waiting and you keep nothing to share: if you write, pick up something from " +
			"your last conversation, never a bare \"how are you?\". "
		if len(c.cfg.PersonaInterests) > 0 && p.w.Rel.UnansweredProactive == 0 {
			line += "Your interests all came up in your last openers: leave them for now. "
		}
		return line
	}
	label, when := Quote(t.Label), ""
	if t.When != "" {
		when = " (" + t.When + ")"
	}
	switch t.Kind {
	case brain.TopicCheckin:
		return "If you write, bring up " + label + ": you planned to check in about it; ask how it went, warmly. "
	case brain.TopicEvent:
		if t.On != "" && t.On == p.now.In(p.loc).Format(time.DateOnly) {
			return "Today is the day of " + label + " for them: if you write, it is about that — wish them well or ask " +
				"how it is going, warmly and briefly. "
		}
		return capitalised(strings.TrimPrefix(t.When, "on ")) + " was the day of " + label + " for them: if you write, " +
			"it is about that — ask how it went, warmly and briefly. "
	case brain.TopicHowTheyAre:
		return "They told you how they are: " + label + when + ". If you write, it is about that — ask how they are doing " +
			"with it now, warmly, without making it heavy. "
	case brain.TopicQuestion:
		return "They asked " + label + when + " and it was left open: if you write, pick it up. "
	case brain.TopicShare:
		return shareLine(p.w, t)
	}
	return "Nothing of theirs is waiting. If you write, bring up " + label + " (one of your interests): a small thought " +
		"of your own about it, the way a friend mentions what they have been thinking about, briefly, not a lecture. "
}

// capitalised is s with its first letter upper case ("yesterday" → "Yesterday").
func capitalised(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shareLine names the thought to share t for the ask, with what it is tied to.
func shareLine(w brain.Wake, t brain.Topic) string {
	return "You have been meaning to share something with them: " + sharedQuote(w, t) + ". If you write, it is " +
		"about that: bring it up in your own words, briefly, as a friend would. "
}

// sharedQuote quotes the thought to share t, with what it is tied to.
func sharedQuote(w brain.Wake, t brain.Topic) string {
	q := Quote(t.Label)
	if id, ok := strings.CutPrefix(t.ID, "share:"); ok {
		for _, s := range w.Rel.Shares() {
			if s.ID == id && s.TiedTo != "" {
				q += " (tied to " + Quote(s.TiedTo) + ")"
			}
		}
	}
	return q
}

// keptShare is the thought anima kept to share that a chat run offers: in a private chat,
// when the person comes back after returnAfter or more without a message either side
// (turns are the run's recent history), the one that matters most to them (the oldest of
// equals). A friend keeping news for someone who always writes first tells it when they
// come, not in the middle of a conversation that has its own subject.
func keptShare(w brain.Wake, turns []brain.Turn, now time.Time, loc *time.Location) (brain.Topic, bool) {
	if w.Rel.Group {
		return brain.Topic{}, false
	}
	shares := w.Rel.Shareable(now)
	if len(shares) == 0 {
		return brain.Topic{}, false
	}
	came := now
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage && !s.At.IsZero() && s.At.Before(came) {
			came = s.At
		}
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if at := turns[i].At; !at.IsZero() && at.Before(came) {
			if came.Sub(at) < returnAfter {
				return brain.Topic{}, false
			}
			break
		}
	}
	best := shares[0]
	for _, s := range shares[1:] {
		if s.Matters > best.Matters {
			best = s
		}
	}
	return brain.Topic{ID: "share:" + best.ID, Label: best.Text, Kind: brain.TopicShare, Weight: best.Matters,
		When: brain.AgoWords(best.At, now, loc)}, true
}
