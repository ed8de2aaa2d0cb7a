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

// speechMeter is how much speech was made for a user today (speech.Speech).
type speechMeter interface {
	SpeechToday(user int64) time.Duration
}

// voiceReplies is what /voice and /status details know of speaking: the mode
// (voice.reply), the daily speech per user (limits.speech_per_user_per_day; 0: no cap),
// and the meter — nil when there is no speech model.
type voiceReplies struct {
	mode  brain.VoiceMode
	daily time.Duration
	meter speechMeter
}

// voice is /voice [on|off|auto] — a person's own choice of voice replies, kept with the
// chat's relationship (per member in a group) — and /voice group on|off, a group's switch,
// for its admins. Without an argument it says how things stand.
func (c *commands) voice(ctx context.Context, in call) (loop.CommandResult, error) {
	if c.speech.meter == nil {
		return in.reply("I have no voice yet, so I always answer in writing."), nil
	}
	args := strings.Fields(strings.ToLower(in.arg))
	if len(args) > 0 && args[0] == "group" {
		return c.groupVoice(ctx, in, args[1:])
	}
	pref := map[string]brain.VoicePref{"on": brain.VoiceOn, "off": brain.VoiceNo, "auto": brain.VoiceAuto}
	if len(args) == 0 {
		return in.reply(c.voiceLine(in.view.Rel, in.sig.User) + " Send /voice on, /voice off or /voice auto to change it."), nil
	}
	p, ok := pref[args[0]]
	if len(args) != 1 || !ok {
		return in.reply("Send /voice on (I answer you with voice notes), /voice off (always in writing) or /voice auto (" + modeWords(c.speech.mode) + ")."), nil
	}
	rel := in.view.Rel
	rel.SetVoicePref(in.sig.User, p)
	r := in.reply("Okay. " + c.voiceLine(rel, in.sig.User))
	r.Intents = []brain.Intent{brain.SetVoice{Chat: in.sig.Chat, User: in.sig.User, Pref: p}}
	return r, nil
}

// groupVoice is /voice group on|off: only admins may turn a group's voice replies on.
func (c *commands) groupVoice(ctx context.Context, in call, args []string) (loop.CommandResult, error) {
	if !in.group {
		return in.reply("/voice group is for groups. Here, send /voice on or /voice off."), nil
	}
	if len(args) != 1 || args[0] != "on" && args[0] != "off" {
		return in.reply("Send /voice group on or /voice group off."), nil
	}
	if refusal, err := c.groupSetting(ctx, in.sig, in.group, "change voice replies in this group"); err != nil || refusal != "" {
		return in.reply(refusal), err
	}
	on := args[0] == "on"
	text := "Okay — I answer in writing here."
	if on {
		text = "Okay — here I may answer with voice notes too (" + modeWords(c.speech.mode) + "); each of you can choose with /voice on or /voice off."
	}
	r := in.reply(text)
	r.Intents = []brain.Intent{brain.SetVoice{Chat: in.sig.Chat, Group: true, On: on}}
	return r, nil
}

// voiceLine says how user is answered in rel's chat.
func (c *commands) voiceLine(rel brain.Relationship, user int64) string {
	switch {
	case rel.Group && !rel.GroupVoice:
		return "In this group I answer in writing (its admins can send /voice group on)."
	case rel.Voice[user] == brain.VoiceOn:
		return "I answer you with voice notes."
	case rel.Voice[user] == brain.VoiceNo:
		return "I answer you in writing."
	}
	return "Voice replies: " + modeWords(c.speech.mode) + "."
}

// modeWords says a voice mode in a person's words.
func modeWords(m brain.VoiceMode) string {
	if w, ok := voiceModeWords[m]; ok {
		return w
	}
	return "I answer in writing"
}

var voiceModeWords = map[brain.VoiceMode]string{
	brain.VoiceMirror: "a voice note gets a voice note back",
	brain.VoiceAlways: "I answer with voice notes",
}

// voiceDetails is /status details' line on speaking, or "" without a speech model.
func (c *commands) voiceDetails(rel brain.Relationship, user int64) string {
	if c.speech.meter == nil {
		return ""
	}
	line := c.voiceLine(rel, user) + " Spoken for you today: " + clockWords(c.speech.meter.SpeechToday(user))
	if c.speech.daily > 0 {
		line += " of " + clockWords(c.speech.daily)
	}
	return line + "."
}

// clockWords is d as m:ss.
func clockWords(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
