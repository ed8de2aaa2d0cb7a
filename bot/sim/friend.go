package sim

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// This file counts what issue 35 judges a run's first messages by: what kind they were,
// where what they brought up came from, how many went out in the hour before the person
// would have written anyway, and how many follow-ups chased anima's own unanswered opener.

// Where an opener's topic came from (topicSource).
const (
	sourceLife     = "their life"
	sourceShare    = "a share"
	sourceInterest = "an interest"
	sourceNone     = "none"
)

// sources is the order the summary lists them in.
var sources = []string{sourceLife, sourceShare, sourceInterest, sourceNone}

// preemptWindow is how long before the person's own first message of a day a first
// message of anima's counts as pre-empting it.
const preemptWindow = time.Hour

// friendFigures are a run's counts of issue 35.
type friendFigures struct {
	openers  int
	kinds    map[brain.OpenerKind]int
	kindList []brain.OpenerKind // in the order first seen
	sources  map[string]int
	// preempted counts first messages sent within preemptWindow before the person's own
	// first message of that local day; chased the follow-ups sent while anima's own opener
	// was the last, unanswered line.
	preempted, chased int
	preemptedAt       []time.Time
	// life says whether the scenario gives the person a life (SimUser.Life);
	// sharesInHours counts the openers and replies that said a share inside the person's
	// hours, sharedInReplies the replies that said one (the person came back first).
	life                           bool
	sharesInHours, sharedInReplies int
	// aboutLife counts the openers about the person's life: its own topics (a check-in, an
	// event, how they are, a question of theirs) and the shares the dream tied to
	// something of their life (the share's words name a concern the scenario gave them).
	aboutLife int
}

// topicSource says where the subject code chose for an opener came from: a concern's
// check-in, how they are or a question of theirs (their life), something the dream kept to
// share, one of anima's interests, or nothing.
func topicSource(subject string) string {
	kind, _, _ := strings.Cut(subject, ":")
	switch kind {
	case "checkin", "event", "howtheyare", "question":
		return sourceLife
	case "thought", "share":
		return sourceShare
	case "interest":
		return sourceInterest
	}
	return sourceNone
}

// friend counts the run's first messages (the ledger) against the person's own messages.
func (t *timeline) friend() friendFigures {
	f := friendFigures{kinds: map[brain.OpenerKind]int{}, sources: map[string]int{}, life: len(t.sc.User.Life) > 0}
	for _, so := range t.ledger {
		f.openers++
		if f.kinds[so.o.Kind] == 0 {
			f.kindList = append(f.kindList, so.o.Kind)
		}
		f.kinds[so.o.Kind]++
		src := topicSource(so.o.Subject)
		f.sources[src]++
		if src == sourceLife || src == sourceShare && t.namesTheirLife(so.o.Topic) {
			f.aboutLife++
		}
		if src == sourceShare && t.theirHours(so.at) {
			f.sharesInHours++
		}
		if first, ok := t.firstOwn(so.at); ok && so.at.Before(first) && first.Sub(so.at) <= preemptWindow {
			f.preempted++
			f.preemptedAt = append(f.preemptedAt, so.at.In(t.loc))
		}
	}
	for _, so := range t.sharedReplies {
		f.sharedInReplies++
		if t.theirHours(so.at) {
			f.sharesInHours++
		}
	}
	// Walk the messages in order: a follow-up while the last message of the user is older
	// than anima's last opener chases an unanswered opener.
	var lastUser, lastOpener time.Time
	for _, r := range t.rows {
		if r.msgs[msgUser] > 0 {
			lastUser = r.at
		}
		if r.msgs[msgFollowup] > 0 && !lastOpener.IsZero() && lastUser.Before(lastOpener) {
			f.chased += r.msgs[msgFollowup]
		}
		if r.msgs[msgProactive] > 0 {
			lastOpener = r.at
		}
	}
	return f
}

// namesTheirLife reports whether topic names something the scenario's person told anima
// (a concern of their life, or their words).
func (t *timeline) namesTheirLife(topic string) bool {
	topic = strings.ToLower(topic)
	for _, l := range t.sc.User.Life {
		for _, s := range []string{l.Concern, l.Says} {
			if s = strings.ToLower(strings.TrimSpace(s)); s != "" && strings.Contains(topic, s) {
				return true
			}
		}
	}
	return false
}

// firstOwn is the first message the person writes of their own accord on at's local day.
func (t *timeline) firstOwn(at time.Time) (time.Time, bool) {
	y, m, d := at.In(t.loc).Date()
	for _, o := range t.own {
		if oy, om, od := o.In(t.loc).Date(); oy == y && om == m && od == d {
			return o, true
		}
	}
	return time.Time{}, false
}

// write prints the counts for summary.txt.
func (f friendFigures) write(w io.Writer) {
	fmt.Fprintf(w, "\nfirst messages as a friend would judge them (issue 35): %d\n", f.openers)
	var kinds []string
	for _, k := range f.kindList {
		kinds = append(kinds, fmt.Sprintf("%s %d", openerKindWords(k), f.kinds[k]))
	}
	if len(kinds) == 0 {
		kinds = []string{"none"}
	}
	fmt.Fprintf(w, "  by kind: %s\n", strings.Join(kinds, ", "))
	var srcs []string
	for _, s := range sources {
		srcs = append(srcs, fmt.Sprintf("%s %d", s, f.sources[s]))
	}
	fmt.Fprintf(w, "  by where the topic came from: %s\n", strings.Join(srcs, ", "))
	if f.life {
		fmt.Fprintf(w, "  about their life (their own topics, and shares tied to what they told): %d of %d (target at least half: the scenario gives them a life)\n",
			f.aboutLife, f.openers)
		fmt.Fprintf(w, "  shares said in the person's hours: %d (target at least 1), %d of them in a reply when they came back\n",
			f.sharesInHours, f.sharedInReplies)
	}
	fmt.Fprintf(w, "  pre-empted (sent within %s before the person's own first message of that day): %d (target at most 1 in two weeks)",
		brain.Duration(preemptWindow), f.preempted)
	for i, at := range f.preemptedAt {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(w, "%s%s", sep, at.Format("Mon 02 Jan 15:04"))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  follow-ups while anima's own opener was the last, unanswered line: %d (target 0)\n", f.chased)
}
