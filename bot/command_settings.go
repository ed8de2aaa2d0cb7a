package bot

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// quiet is /quiet [HOURS]: anima does not write first to the chat for that long (3 hours
// by default, up to 24). In a group only admins may ask.
func (c *commands) quiet(ctx context.Context, in call) (loop.CommandResult, error) {
	if refusal, err := c.groupSetting(ctx, in.sig, in.group, "ask me to keep quiet here"); err != nil || refusal != "" {
		return in.reply(refusal), err
	}
	hours := 3.0
	if in.arg != "" {
		h, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToLower(in.arg), "h"), 64)
		if err != nil || h <= 0 || math.IsNaN(h) || math.IsInf(h, 0) {
			return in.reply("Send /quiet or /quiet HOURS, for example /quiet 8 (up to 24)."), nil
		}
		hours = min(h, 24)
	}
	until := in.view.Now.Add(time.Duration(hours * float64(time.Hour)))
	r := in.reply(fmt.Sprintf("Okay — I won't write first until %s. You can always write to me.", until.In(in.view.Loc).Format("Mon 15:04")))
	r.Intents = []brain.Intent{brain.Defer{Chat: in.sig.Chat, Until: until, Reason: "the user asked for quiet"}}
	return r, nil
}

// timezone is /timezone [ZONE]: it shows the chat's time zone or sets it. In a group only
// admins may set it.
func (c *commands) timezone(ctx context.Context, in call) (loop.CommandResult, error) {
	arg, view := in.arg, in.view
	if arg == "" {
		whose := "Your"
		if in.group {
			whose = "This group's"
		}
		return in.reply(fmt.Sprintf("%s time zone is %s (it's %s there). Send /timezone Area/City to change it, e.g. /timezone Europe/Berlin.",
			whose, view.Loc, view.Now.In(view.Loc).Format("15:04"))), nil
	}
	if refusal, err := c.groupSetting(ctx, in.sig, in.group, "change this group's time zone"); err != nil || refusal != "" {
		return in.reply(refusal), err
	}
	loc, err := time.LoadLocation(arg)
	if err != nil || arg == "Local" {
		return in.reply(fmt.Sprintf("I don't know the time zone %q. Use an IANA name like Europe/Berlin or America/New_York.", arg)), nil
	}
	r := in.reply(fmt.Sprintf("Got it: your time zone is %s now (it's %s there).", loc, view.Now.In(loc).Format("15:04")))
	r.Intents = []brain.Intent{brain.SetTimezone{Chat: in.sig.Chat, Zone: loc.String()}}
	return r, nil
}

// groupSetting says why the sender may not change a setting the whole chat shares
// (/quiet, /timezone), or "" when they may: anyone in a private chat, only the owner and
// administrators in a group. An error is the admin check's (the loop logs it and says
// the command didn't work).
func (c *commands) groupSetting(ctx context.Context, sig brain.Signal, group bool, what string) (string, error) {
	if !group || c.admins == nil {
		return "", nil
	}
	admin, err := c.admins.IsAdmin(ctx, sig.Chat, sig.User)
	if err != nil {
		return "", fmt.Errorf("check the group's admins: %w", err)
	}
	if !admin {
		return "Only this group's admins can " + what + ". In our private chat, it's yours to decide.", nil
	}
	return "", nil
}
