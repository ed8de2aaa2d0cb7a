package bot

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// listReminders is /reminders [PAGE]: the chat's upcoming reminders a page at a time, in
// a group only the sender's own.
func (c *commands) listReminders(_ context.Context, in call) (loop.CommandResult, error) {
	items, err := c.reminders.List(in.sig.Chat)
	if err != nil {
		return loop.CommandResult{}, fmt.Errorf("list reminders: %w", err)
	}
	if in.group {
		items = ownItems(items, in.sig.User)
	}
	page, err := strconv.Atoi(in.arg)
	if in.arg == "" {
		page = 1
	} else if err != nil || page < 1 {
		return in.reply("Send /reminders or /reminders PAGE, for example /reminders 2."), nil
	}
	return in.reply(c.format(items, page, in.view.Loc, in.view.Now)), nil
}

// cancel is /cancel ID: it cancels one reminder, in a group only one of the sender's own.
func (c *commands) cancel(_ context.Context, in call) (loop.CommandResult, error) {
	sig, arg := in.sig, in.arg
	if arg == "" {
		return in.reply("Which one? Send /cancel ID — /reminders shows the ids."), nil
	}
	if in.group {
		// In a group a member cancels only their own reminders.
		items, err := c.reminders.List(sig.Chat)
		if err != nil {
			return loop.CommandResult{}, fmt.Errorf("cancel reminder: %w", err)
		}
		if !slices.ContainsFunc(ownItems(items, sig.User), func(it brain.ScheduleItem) bool { return it.ID == arg }) {
			return in.reply(fmt.Sprintf("You have no reminder %q. /reminders shows the ids of yours.", arg)), nil
		}
	}
	ok, err := c.reminders.Cancel(sig.Chat, arg)
	if err != nil {
		return loop.CommandResult{}, fmt.Errorf("cancel reminder: %w", err)
	}
	if !ok {
		return in.reply(fmt.Sprintf("I have no reminder %q. /reminders shows the ids.", arg)), nil
	}
	return in.reply(fmt.Sprintf("Cancelled %s.", arg)), nil
}

// ownItems keeps the items of user.
func ownItems(items []brain.ScheduleItem, user int64) []brain.ScheduleItem {
	var own []brain.ScheduleItem
	for _, it := range items {
		if it.User == user {
			own = append(own, it)
		}
	}
	return own
}
