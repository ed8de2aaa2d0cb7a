package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/storage"
)

// forgetMe is /forget: it asks for confirmation with two buttons, and on "yes" deletes
// everything stored about the sender. A button is answered only by whoever asked.
func (c *commands) forgetMe(_ context.Context, in call) (loop.CommandResult, error) {
	sig := in.sig
	answer, owner, _ := strings.Cut(strings.ToLower(in.arg), " ")
	if owner != "" && owner != strconv.FormatInt(sig.User, 10) {
		// A button under someone else's /forget: it is theirs to press.
		return in.reply(notYours), nil
	}
	switch answer {
	case "yes":
		rep, err := c.forget.ForgetUser(sig.User)
		if err != nil {
			return loop.CommandResult{}, fmt.Errorf("forget: %w", err)
		}
		text := forgotten(rep, in.group)
		if c.compact != nil && rep.Erased {
			// The deleted bytes leave the file once the confirmation is on its way,
			// or at the next compaction if one ran lately.
			text += " " + erasedBy(c.compact.CompactSoon(), in.view.Now, in.view.Loc)
		}
		r := in.reply(text)
		r.Forget = true
		return r, nil
	case "no":
		return in.reply("Okay, I keep everything as it is."), nil
	}
	ask := "This deletes everything I have stored about you — our conversation, what I remembered, your reminders — and can't be undone. Are you sure?"
	if in.group {
		ask = "This deletes everything I have stored about you — our private conversation, and in every group we share your messages, my answers to them, your reminders and what I remembered about you — and can't be undone. Other members' messages stay. Are you sure?"
	}
	who := " " + strconv.FormatInt(sig.User, 10)
	return in.reply(ask, []brain.Button{{Text: "Yes, forget everything", Data: "/forget yes" + who}, {Text: "No, keep it", Data: "/forget no" + who}}), nil
}

// notYours answers a member who pressed a confirmation button another member asked for.
const notYours = "This button isn't yours — only the person who asked can answer it."

// forgotten is the confirmation of /forget: what was deleted and, where the user shared
// groups with anima, exactly what was kept.
func forgotten(rep storage.ForgetReport, group bool) string {
	const private = "Done. I have deleted everything I had stored about you: our conversation, what I remembered and your reminders."
	if len(rep.Chats) == 0 && !group {
		return private
	}
	return fmt.Sprintf("Done. I have deleted our private conversation, what I remembered about you and your reminders; "+
		"and in %s we share: %s, %s and %s. "+
		"What I kept: other members' messages; group messages stored before I recorded who wrote each one; "+
		"and summaries of group conversations written before now (each folds several members' words together, "+
		"so I cannot take yours out of them).",
		plural(len(rep.Chats), "group", "groups"), plural(rep.Turns, "message of yours or my answer to it", "messages of yours and my answers to them"),
		plural(rep.Reminders, "reminder", "reminders"), plural(rep.Facts, "fact", "facts"))
}

// erasedBy tells when the deleted words leave the disk: the store's file keeps them in
// freed space until the compaction due at at.
func erasedBy(at, now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	wait := at.Sub(now)
	if wait <= time.Minute {
		return "Within a minute they are gone from my disk too."
	}
	return fmt.Sprintf("They are gone from my disk too by %s (in %s), when I next rewrite my database file.",
		at.Add(time.Minute).Truncate(time.Minute).In(loc).Format("15:04"), brain.Duration(wait))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
