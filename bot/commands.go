package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
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
	speech    voiceReplies   // its meter is nil without a speech model
	states    stateReader    // may be nil
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

var _ loop.CommandHandler = (*commands)(nil)

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
	{"voice", "[on|off|auto]", "answer you with voice notes, or in writing"},
	{"thoughts", "", "what I have been thinking about lately, and how you have seemed to me"},
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

// call is one command as its handler sees it: the signal it came in, the argument after
// the command's name, and whether it was sent in a group (where commands act only on the
// sender's own items).
type call struct {
	sig   brain.Signal
	view  loop.CommandView
	arg   string
	group bool
}

// reply is a system message answering the call's chat.
func (in call) reply(text string, buttons ...[]brain.Button) loop.CommandResult {
	return loop.CommandResult{Reply: []brain.SendMessage{{Chat: in.sig.Chat, Text: text, Kind: brain.KindSystem, Plain: true, Buttons: buttons}}}
}

// handlers maps each command anima answers itself to its method; what is not here goes
// to the plugins.
var handlers = map[string]func(*commands, context.Context, call) (loop.CommandResult, error){
	"/start":     (*commands).start,
	"/help":      (*commands).help,
	"/forget":    (*commands).forgetMe,
	"/reminders": (*commands).listReminders,
	"/cancel":    (*commands).cancel,
	"/quiet":     (*commands).quiet,
	"/status":    (*commands).statusCmd,
	"/timezone":  (*commands).timezone,
	"/voice":     (*commands).voice,
	"/thoughts":  (*commands).thoughts,
}

// Command answers one /command: anima's own through handlers, the rest through the
// plugins (not in groups), else a pointer to /help.
func (c *commands) Command(ctx context.Context, sig brain.Signal, view loop.CommandView) (loop.CommandResult, error) {
	name, arg, _ := strings.Cut(strings.TrimSpace(sig.Text), " ")
	in := call{sig: sig, view: view, arg: strings.TrimSpace(arg), group: sig.User != 0 && sig.User != sig.Chat}
	if h, ok := handlers[strings.ToLower(name)]; ok {
		return h(c, ctx, in)
	}
	if c.plugins != nil && !in.group {
		if text, ok := c.plugins.Command(sig.Chat, sig.User, strings.ToLower(name), in.arg, view.Now, view.Loc); ok {
			return in.reply(text), nil
		}
	}
	return in.reply("I don't know that command. /help lists what I understand."), nil
}

// start is /start: hello and what anima is.
func (c *commands) start(_ context.Context, in call) (loop.CommandResult, error) {
	who := ""
	if in.sig.UserName != "" {
		who = ", " + in.sig.UserName
	}
	return in.reply(fmt.Sprintf("Hi%s! I'm %s — a companion you can talk to about anything. I remember what matters to you, "+
		"I can remind you of things, and now and then I may write first when I have a reason to (never at night, never too often; /quiet "+
		"holds me back). /help lists what I understand.", who, c.persona)), nil
}

// help is /help: every command (helpText).
func (c *commands) help(_ context.Context, in call) (loop.CommandResult, error) {
	return in.reply(helpText()), nil
}

// statusCmd is /status and /status details (statusReply).
func (c *commands) statusCmd(_ context.Context, in call) (loop.CommandResult, error) {
	return in.reply(c.statusReply(in.sig, in.view, in.arg)), nil
}
