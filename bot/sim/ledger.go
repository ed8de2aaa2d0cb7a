package sim

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// The openers of a run: each message anima wrote first, with the topic the scripted model
// gave it, listed in summary.txt with a count of repeats within brain.RecentOpeners
// openers (target 0: what to bring up is chosen in code, never a topic of the last ones).

// simOpener is one first message as delivered.
type simOpener struct {
	at time.Time
	o  brain.Opener
}

// noteOpener records m, delivered at at, if it is a first message, or a reply that
// brought up a thought anima kept to share (sharedReplies).
func (t *timeline) noteOpener(at time.Time, m brain.SendMessage) {
	if m.Shared != "" {
		t.sharedReplies = append(t.sharedReplies, simOpener{at: at, o: brain.Opener{Topic: m.Shared, At: at}})
	}
	if m.Opener.Kind != "" {
		o := m.Opener
		o.At = at
		t.ledger = append(t.ledger, simOpener{at: at, o: o})
	}
}

// openerKey is what two openers share when they are about the same thing: the subject code
// chose, else the model's topic; "" for one about nothing named.
func openerKey(o brain.Opener) string {
	if o.Subject != "" {
		return o.Subject
	}
	return strings.ToLower(o.Topic)
}

// openerRepeats counts the openers about the same thing as one of the RecentOpeners before.
func openerRepeats(os []simOpener) int {
	n := 0
	for i, cur := range os {
		key := openerKey(cur.o)
		if key == "" {
			continue
		}
		for _, prev := range os[max(0, i-brain.RecentOpeners):i] {
			if openerKey(prev.o) == key {
				n++
				break
			}
		}
	}
	return n
}

// writeLedger lists the run's openers and their repeats for summary.txt.
func (t *timeline) writeLedger(w io.Writer) {
	fmt.Fprintf(w, "\nopeners (messages anima wrote first, local time, kind, topic [what code chose]): %d\n", len(t.ledger))
	for _, so := range t.ledger {
		topic := "(no topic)"
		if so.o.Topic != "" {
			topic = strconv.Quote(so.o.Topic)
		}
		chosen := ""
		if sub := so.o.Subject; strings.HasPrefix(sub, "interest:") {
			chosen = " [" + sub + "]"
		} else if kind, _, ok := strings.Cut(sub, ":"); ok {
			chosen = " [" + strings.ReplaceAll(kind, "checkin", "check-in") + "]" // a concern's id is random: the listing repeats without it
		}
		fmt.Fprintf(w, "  %s  %-11s %s%s\n", so.at.In(t.loc).Format("Mon 01-02 15:04"), openerKindWords(so.o.Kind), topic, chosen)
	}
	fmt.Fprintf(w, "  repeats within %d openers: %d (target 0)\n", brain.RecentOpeners, openerRepeats(t.ledger))
}

// openerScript is the scripted answer of a run that may write first; its topic is read
// from the request when it comes, as a model would read it: what the ask says to bring up.
type openerScript struct {
	text, status string
	chat         bool // a reply: it names a topic only to say it brought up a kept thought
}

// askedTopic matches what a run is told to bring up (brain/cognition topicLine and
// checkinAsk).
var askedTopic = regexp.MustCompile(`(?:If you write, bring up|You planned to check in about:|the day of|` +
	`They told you how they are:|They asked|share something with them:) ("(?:[^"\\]|\\.)*")`)

// keptShare matches the thought a chat run is offered to share (brain/prompt's share
// section).
var keptShare = regexp.MustCompile(`You kept something to share with them: ("(?:[^"\\]|\\.)*")`)

// reply is the answer to req: the script's text and status, the topic the request's
// messages name (the last one naming one), none without one. A chat run's script (chat)
// answers plainly unless the run is offered a thought to share: then it brings it up.
func (s *openerScript) reply(req openai.ChatCompletionRequest) openaitest.Reply {
	asked := askedTopic
	if s.chat {
		asked = keptShare
	}
	topic := ""
	for i := len(req.Messages) - 1; i >= 0 && topic == ""; i-- {
		if req.Messages[i].Role != openai.ChatMessageRoleSystem {
			continue
		}
		if m := asked.FindStringSubmatch(req.Messages[i].Content); m != nil {
			topic, _ = strconv.Unquote(m[1])
		}
	}
	switch {
	case s.chat && topic == "":
		return openaitest.Answer(s.text, s.status, 0.9)
	case s.chat:
		return openaitest.OpenerAnswer(s.text+" And something I kept to tell you: "+topic+".", s.status, 0.9, topic)
	}
	return openaitest.OpenerAnswer(s.text, s.status, 0.9, topic)
}

// openerKindWords names an opener's kind in the summary's words.
func openerKindWords(k brain.OpenerKind) string {
	if w, ok := kindWords[k]; ok {
		return w
	}
	return string(k)
}

var kindWords = map[brain.OpenerKind]string{
	brain.OpenerMissingYou: "missing you",
	brain.OpenerCheckin:    "check-in",
	brain.OpenerFollowup:   "follow-up",
}
