package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// speechMeter is how much speech was made for a user today (cognition.Cognition).
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
	switch m {
	case brain.VoiceMirror:
		return "a voice note gets a voice note back"
	case brain.VoiceAlways:
		return "I answer with voice notes"
	}
	return "I answer in writing"
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
