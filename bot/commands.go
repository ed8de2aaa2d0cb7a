package bot

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/telegram"
	"github.com/anima-bot/anima/storage"
)

// forgetter deletes everything stored about a user: their private chat, and their own
// data in every other chat.
type forgetter interface {
	ForgetUser(user int64) (storage.ForgetReport, error)
}

// reminderBook lists and cancels a chat's schedules.
type reminderBook interface {
	List(chat int64) ([]brain.ScheduleItem, error)
	Cancel(chat int64, id string) (bool, error)
}

// forecaster says when anima may next write first to a chat: the aggregation layer, from
// the gates it decides with (aggregation.Aggregator.NextProactive). It must be safe to
// call off the core loop's goroutine; false means never.
type forecaster interface {
	NextProactive(now time.Time, rel *brain.Relationship, loc *time.Location, acks []brain.Ack) (time.Time, bool)
}

// outageReporter says since when the model has been unreachable
// (cognition.Cognition.Outage); ok is false while it answers.
type outageReporter interface {
	Outage() (since time.Time, ok bool)
}

// compactor rewrites the store so that deleted data leaves no trace in the file
// (storage.Store.Compact). It is asked after /forget, off the chat's critical path, and
// says when the compaction is due.
type compactor interface {
	CompactSoon() time.Time
}

// commands answers the /commands anima understands without the model.
type commands struct {
	persona   string
	forget    forgetter
	reminders reminderBook
	format    func(items []brain.ScheduleItem, page int, loc *time.Location, now time.Time) string // one page
	policy    brain.ProactivePolicy                                                                // what /status explains
	next      forecaster
	plugins   pluginCommands // may be nil
	outage    outageReporter // may be nil
	compact   compactor      // may be nil
	admins    adminChecker   // may be nil: any member may change a group's settings
	mcp       mcpStatus      // may be nil
}

// adminChecker tells a group's admins (the Telegram channel: getChatMember).
type adminChecker interface {
	IsAdmin(ctx context.Context, chat, user int64) (bool, error)
}

// pluginCommands is what the plugins add to commands: lines for /status and /status
// details, and commands of their own (/thoughts).
type pluginCommands interface {
	Status(chat, user int64, now time.Time, loc *time.Location) string
	StatusDetails(chat, user int64, now time.Time, loc *time.Location) string
	Command(chat, user int64, name, arg string, now time.Time, loc *time.Location) (string, bool)
}

var _ brain.CommandHandler = (*commands)(nil)

// commandList is every command anima understands: /help shows it and Telegram's command
// menu is set from it.
var commandList = []struct{ name, args, about string }{
	{"start", "", "hello and what I am"},
	{"help", "", "what I understand"},
	{"status", "[details]", "what I am keeping track of for you"},
	{"quiet", "[hours]", "I won't write first for a while (default 3 hours, up to 24)"},
	{"timezone", "[zone]", "show or set your time zone, e.g. /timezone Europe/Berlin"},
	{"reminders", "[page]", "your upcoming reminders, 20 a page"},
	{"cancel", "ID", "cancel a reminder"},
	{"thoughts", "", "what I have been thinking about lately"},
	{"forget", "", "delete everything I have stored about you"},
}

// helpText is the answer to /help.
func helpText() string {
	var b strings.Builder
	b.WriteString("Here is what I understand:\n")
	for _, c := range commandList {
		b.WriteString("/" + c.name)
		if c.args != "" {
			b.WriteString(" " + c.args)
		}
		b.WriteString(" — " + c.about + "\n")
	}
	b.WriteString("\nAnything else you write, I'll simply read and answer.")
	return b.String()
}

// menuCommands is the command menu Telegram shows.
func menuCommands() []telegram.Command {
	out := make([]telegram.Command, len(commandList))
	for i, c := range commandList {
		out[i] = telegram.Command{Name: c.name, Description: c.about}
	}
	return out
}

func (c *commands) Command(ctx context.Context, sig brain.Signal, view brain.CommandView) (brain.CommandResult, error) {
	name, arg, _ := strings.Cut(strings.TrimSpace(sig.Text), " ")
	arg = strings.TrimSpace(arg)
	reply := func(text string, buttons ...[]brain.Button) brain.CommandResult {
		return brain.CommandResult{Reply: []brain.SendMessage{{Chat: sig.Chat, Text: text, Kind: brain.KindSystem, Plain: true, Buttons: buttons}}}
	}
	// In a group, commands act only on the sender's own items.
	group := sig.User != 0 && sig.User != sig.Chat
	switch strings.ToLower(name) {
	case "/start":
		who := ""
		if sig.UserName != "" {
			who = ", " + sig.UserName
		}
		return reply(fmt.Sprintf("Hi%s! I'm %s — a companion you can talk to about anything. I remember what matters to you, "+
			"I can remind you of things, and now and then I may write first when I have a reason to (never at night, never too often; /quiet "+
			"holds me back). /help lists what I understand.", who, c.persona)), nil
	case "/help":
		return reply(helpText()), nil
	case "/forget":
		answer, owner, _ := strings.Cut(strings.ToLower(arg), " ")
		if owner != "" && owner != strconv.FormatInt(sig.User, 10) {
			// A button under someone else's /forget: it is theirs to press.
			return reply(notYours), nil
		}
		switch answer {
		case "yes":
			rep, err := c.forget.ForgetUser(sig.User)
			if err != nil {
				return brain.CommandResult{}, fmt.Errorf("forget: %w", err)
			}
			text := forgotten(rep, group)
			if c.compact != nil && rep.Erased {
				// The deleted bytes leave the file once the confirmation is on its way,
				// or at the next compaction if one ran lately.
				text += " " + erasedBy(c.compact.CompactSoon(), view.Now, view.Loc)
			}
			r := reply(text)
			r.Forget = true
			return r, nil
		case "no":
			return reply("Okay, I keep everything as it is."), nil
		}
		ask := "This deletes everything I have stored about you — our conversation, what I remembered, your reminders — and can't be undone. Are you sure?"
		if group {
			ask = "This deletes everything I have stored about you — our private conversation, and in every group we share your messages, my answers to them, your reminders and what I remembered about you — and can't be undone. Other members' messages stay. Are you sure?"
		}
		who := " " + strconv.FormatInt(sig.User, 10)
		return reply(ask, []brain.Button{{Text: "Yes, forget everything", Data: "/forget yes" + who}, {Text: "No, keep it", Data: "/forget no" + who}}), nil
	case "/reminders":
		items, err := c.reminders.List(sig.Chat)
		if err != nil {
			return brain.CommandResult{}, fmt.Errorf("list reminders: %w", err)
		}
		if group {
			items = ownItems(items, sig.User)
		}
		page, err := strconv.Atoi(arg)
		if arg == "" {
			page = 1
		} else if err != nil || page < 1 {
			return reply("Send /reminders or /reminders PAGE, for example /reminders 2."), nil
		}
		return reply(c.format(items, page, view.Loc, view.Now)), nil
	case "/cancel":
		if arg == "" {
			return reply("Which one? Send /cancel ID — /reminders shows the ids."), nil
		}
		if group {
			// In a group a member cancels only their own reminders.
			items, err := c.reminders.List(sig.Chat)
			if err != nil {
				return brain.CommandResult{}, fmt.Errorf("cancel reminder: %w", err)
			}
			if !slices.ContainsFunc(ownItems(items, sig.User), func(it brain.ScheduleItem) bool { return it.ID == arg }) {
				return reply(fmt.Sprintf("You have no reminder %q. /reminders shows the ids of yours.", arg)), nil
			}
		}
		ok, err := c.reminders.Cancel(sig.Chat, arg)
		if err != nil {
			return brain.CommandResult{}, fmt.Errorf("cancel reminder: %w", err)
		}
		if !ok {
			return reply(fmt.Sprintf("I have no reminder %q. /reminders shows the ids.", arg)), nil
		}
		return reply(fmt.Sprintf("Cancelled %s.", arg)), nil
	case "/quiet":
		if refusal, err := c.groupSetting(ctx, sig, group, "ask me to keep quiet here"); err != nil || refusal != "" {
			return reply(refusal), err
		}
		hours := 3.0
		if arg != "" {
			h, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToLower(arg), "h"), 64)
			if err != nil || h <= 0 || math.IsNaN(h) || math.IsInf(h, 0) {
				return reply("Send /quiet or /quiet HOURS, for example /quiet 8 (up to 24)."), nil
			}
			hours = min(h, 24)
		}
		until := view.Now.Add(time.Duration(hours * float64(time.Hour)))
		r := reply(fmt.Sprintf("Okay — I won't write first until %s. You can always write to me.", until.In(view.Loc).Format("Mon 15:04")))
		r.Intents = []brain.Intent{brain.Defer{Chat: sig.Chat, Until: until, Reason: "the user asked for quiet"}}
		return r, nil
	case "/status":
		return reply(c.statusReply(sig, view, arg)), nil
	case "/timezone":
		if arg == "" {
			whose := "Your"
			if group {
				whose = "This group's"
			}
			return reply(fmt.Sprintf("%s time zone is %s (it's %s there). Send /timezone Area/City to change it, e.g. /timezone Europe/Berlin.",
				whose, view.Loc, view.Now.In(view.Loc).Format("15:04"))), nil
		}
		if refusal, err := c.groupSetting(ctx, sig, group, "change this group's time zone"); err != nil || refusal != "" {
			return reply(refusal), err
		}
		loc, err := time.LoadLocation(arg)
		if err != nil || arg == "Local" {
			return reply(fmt.Sprintf("I don't know the time zone %q. Use an IANA name like Europe/Berlin or America/New_York.", arg)), nil
		}
		r := reply(fmt.Sprintf("Got it: your time zone is %s now (it's %s there).", loc, view.Now.In(loc).Format("15:04")))
		r.Intents = []brain.Intent{brain.SetTimezone{Chat: sig.Chat, Zone: loc.String()}}
		return r, nil
	}
	if c.plugins != nil && !group {
		if text, ok := c.plugins.Command(sig.Chat, sig.User, strings.ToLower(name), arg, view.Now, view.Loc); ok {
			return reply(text), nil
		}
	}
	return reply("I don't know that command. /help lists what I understand."), nil
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

// notYours answers a member who pressed a confirmation button another member asked for.
const notYours = "This button isn't yours — only the person who asked can answer it."

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

// status is /status details: the numbers behind the plain /status (statusReply).
func (c *commands) status(v brain.CommandView) string {
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

func statusWords(s brain.ConversationStatus) string {
	switch s {
	case brain.StatusAwaitingAnswer:
		return "I asked you something and I'm waiting for your answer"
	case brain.StatusClosed:
		return "we wrapped up"
	case brain.StatusIdle:
		return "quiet"
	}
	return "ongoing"
}
