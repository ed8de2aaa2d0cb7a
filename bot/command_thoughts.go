package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// stateReader reads the notes of how a user is: in a chat, its fresh lines, oldest first
// (memory.Memory.HowTheyAre), and in the groups they share with anima.
type stateReader interface {
	HowTheyAre(chat, user int64) ([]brain.StateLine, error)
	HowTheyAreInGroups(user int64) ([]brain.StateNote, error)
}

// thoughtsInGroup is /thoughts' answer in a group: what anima notes about a member is
// theirs to read, not the group's, so it is shown in the private chat alone.
const thoughtsInGroup = "What I notice about someone stays between the two of us, so I don't read it out in a group. " +
	"Send me /thoughts in our private chat: it shows what I noted about you here too."

// thoughts is /thoughts: in a private chat, what the plugins have to say (the inner life's
// journal and the concerns it follows), anima's own note and shares, and the note of how
// the sender seems, there and in the groups they share with anima, each line with its
// date. In a group it posts none of it (thoughtsInGroup). No model call.
func (c *commands) thoughts(_ context.Context, in call) (loop.CommandResult, error) {
	if in.group {
		return in.reply(thoughtsInGroup), nil
	}
	var parts []string
	if c.plugins != nil {
		if text, ok := c.plugins.Command(in.sig.Chat, in.sig.User, "/thoughts", in.arg, in.view.Now, in.view.Loc); ok {
			parts = append(parts, text)
		}
	}
	if s := strings.TrimPrefix(selfThoughts(in.view), "\n\n"); s != "" {
		parts = append(parts, s)
	}
	if c.states != nil {
		lines, err := c.states.HowTheyAre(in.sig.Chat, in.sig.User)
		if err != nil {
			return loop.CommandResult{}, fmt.Errorf("thoughts: %w", err)
		}
		if s := howTheyAreText(lines, in.view.Loc); s != "" {
			parts = append(parts, s)
		}
		groups, err := c.states.HowTheyAreInGroups(in.sig.User)
		if err != nil {
			return loop.CommandResult{}, fmt.Errorf("thoughts: %w", err)
		}
		for _, g := range groups {
			parts = append(parts, strings.Replace(howTheyAreText(g.Lines, in.view.Loc), "How you have seemed to me lately",
				"How you have seemed to me in a group we share", 1))
		}
	}
	if len(parts) == 0 {
		return in.reply("I haven't noted anything about how you are yet."), nil
	}
	return in.reply(strings.Join(parts, "\n\n")), nil
}

// howTheyAreText shows the note of how they are to the person: "" without lines.
func howTheyAreText(lines []brain.StateLine, loc *time.Location) string {
	if len(lines) == 0 {
		return ""
	}
	if loc == nil {
		loc = time.UTC
	}
	var b strings.Builder
	fmt.Fprintf(&b, "How you have seemed to me lately (I keep this for %d days):", int(brain.StateFades/(24*time.Hour)))
	for i := len(lines) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "\n• %s (%s)", lines[i].Text, lines[i].At.In(loc).Format("Mon 2 Jan"))
	}
	return b.String()
}

// selfThoughts is what /thoughts adds in a private chat: anima's own note about the
// two of them and the thoughts it kept to share, as the loop holds them (view.Rel). Shown
// for the same reason as the journal: what anima keeps about a person, the person may
// read. "" without either.
func selfThoughts(view loop.CommandView) string {
	rel, loc := view.Rel, view.Loc
	if loc == nil {
		loc = time.UTC
	}
	shares := rel.Shareable(view.Now)
	if rel.Note() == "" && len(shares) == 0 {
		return ""
	}
	var b strings.Builder
	if rel.Note() != "" {
		b.WriteString("\n\nMy own note about us:\n" + rel.Note())
	}
	for i, s := range shares {
		if i == 0 {
			b.WriteString("\n\nThings I might bring up:")
		}
		b.WriteString("\n• " + s.Text + " (until " + s.Expires.In(loc).Format("Mon 2 Jan") + ")")
	}
	return b.String()
}
