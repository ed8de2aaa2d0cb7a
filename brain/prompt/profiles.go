package prompt

import (
	"slices"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// The prompt of each profile, section by section, in the order the model reads them. A
// section that has nothing to say for a run (no memories, no files) leaves no message.

// chatSections is the prompt answering the person's new message(s).
func chatSections() []section {
	return []section{persona, brief, howTheyAre, self, memories, innerLife, reactions, turns, files, due, share, chatAsk}
}

// proactiveSections is the prompt of a run that may write first: missing them, a thought
// of its own, a follow-up, a reminder.
func proactiveSections() []section {
	return []section{persona, brief, howTheyAre, self, memories, innerLife, reactions, ledger, turns, due, proactiveAsk}
}

// checkinSections is the prompt of a run that asks how something they care about went.
func checkinSections() []section {
	return []section{persona, brief, howTheyAre, self, memories, innerLife, reactions, ledger, turns, checkinAsk}
}

// dreamSections is the prompt of anima's nightly reflection, thinking alone: the day, and
// what a friend would see besides it — its interests, how its recent openers landed (the
// ledger) and what was left unresolved.
func dreamSections() []section {
	return []section{dreamPersona, brief, interests, howTheyAre, self, memories, innerLife, ledger, unresolved, turns, dreamAsk}
}

// cutOrder is the order in which whole sections are dropped while a prompt is over budget
// after fitting (fit.go trims memories, the summary and the turns first).
var cutOrder = []string{"reactions", "share", "interests", "unresolved", "inner life", "self", "how they are", "memories", "ledger", "brief"}

// profileSections names the prompt w's run gets and lists its sections.
func profileSections(w brain.Wake) (string, []section) {
	switch name := profileName(w); name {
	case "dream":
		return name, dreamSections()
	case "chat":
		return name, chatSections()
	case "check-in":
		return name, checkinSections()
	}
	return "proactive", proactiveSections()
}

// profileName is the name of the prompt w's run gets: dream, chat (a new message),
// check-in or proactive.
func profileName(w brain.Wake) string {
	switch {
	case w.Profile == brain.ProfileDream:
		return "dream"
	case slices.ContainsFunc(w.Signals, func(s brain.Signal) bool {
		return s.Type == brain.SignalUserMessage && strings.TrimSpace(s.Text) != ""
	}):
		return "chat"
	case w.Reason.Code == brain.ReasonConcernCheckin:
		return "check-in"
	}
	return "proactive"
}

// WritesFirst reports whether w's prompt is one of a run that may write first (the
// proactive and check-in profiles): its answer carries a topic (as does a chat run's
// offered a thought to share, Topic).
func WritesFirst(w brain.Wake) bool {
	name := profileName(w)
	return name == "proactive" || name == "check-in"
}
