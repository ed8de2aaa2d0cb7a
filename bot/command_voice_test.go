package bot

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

type fakeMeter time.Duration

func (m fakeMeter) SpeechToday(int64) time.Duration { return time.Duration(m) }

// /voice: a person's own choice in a private chat or for themselves in a group, the
// group's switch for its admins only, and nothing to choose without a speech model.
func TestVoiceCommandChoices(t *testing.T) {
	t.Parallel()
	const group, ann, ben = -100, int64(1), int64(2)
	view := loop.CommandView{Loc: time.UTC, Now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	speaking := &commands{policy: brain.DefaultProactivePolicy(), admins: &fakeAdmins{admins: map[int64]bool{ann: true}},
		speech: voiceReplies{mode: brain.VoiceMirror, daily: 10 * time.Minute, meter: fakeMeter(42 * time.Second)}}
	mute := &commands{policy: brain.DefaultProactivePolicy()}
	for _, tc := range []struct {
		name       string
		c          *commands
		chat, user int64
		text       string
		reply      string
		intent     *brain.SetVoice
	}{
		{"on", speaking, ann, ann, "/voice on", "I answer you with voice notes", &brain.SetVoice{Chat: ann, User: ann, Pref: brain.VoiceOn}},
		{"off", speaking, ann, ann, "/voice OFF", "I answer you in writing", &brain.SetVoice{Chat: ann, User: ann, Pref: brain.VoiceNo}},
		{"auto", speaking, ann, ann, "/voice auto", "a voice note gets a voice note back", &brain.SetVoice{Chat: ann, User: ann, Pref: brain.VoiceAuto}},
		{"shown", speaking, ann, ann, "/voice", "Send /voice on", nil},
		{"nonsense", speaking, ann, ann, "/voice loud", "Send /voice on (I answer you with voice notes)", nil},
		{"a member for themselves", speaking, group, ben, "/voice on", "In this group I answer in writing", &brain.SetVoice{Chat: group, User: ben, Pref: brain.VoiceOn}},
		{"a member may not switch the group", speaking, group, ben, "/voice group on", "Only this group's admins", nil},
		{"an admin may", speaking, group, ann, "/voice group on", "here I may answer with voice notes", &brain.SetVoice{Chat: group, Group: true, On: true}},
		{"group in a private chat", speaking, ann, ann, "/voice group on", "for groups", nil},
		{"no speech model", mute, ann, ann, "/voice on", "I have no voice yet", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := view
			v.Rel = brain.Relationship{Chat: tc.chat, Group: tc.chat < 0}
			res, err := tc.c.Command(context.Background(), brain.Signal{Type: brain.SignalCommand, Chat: tc.chat, User: tc.user, Text: tc.text}, v)
			if err != nil || len(res.Reply) != 1 || !strings.Contains(res.Reply[0].Text, tc.reply) {
				t.Fatalf("reply = %+v, %v; want it to say %q", res.Reply, err, tc.reply)
			}
			var want []brain.Intent
			if tc.intent != nil {
				want = []brain.Intent{*tc.intent}
			}
			if !slices.Equal(res.Intents, want) {
				t.Fatalf("intents = %+v, want %+v", res.Intents, want)
			}
		})
	}
	rel := brain.Relationship{Chat: ann}
	if got := speaking.voiceDetails(rel, ann); got != "Voice replies: a voice note gets a voice note back. Spoken for you today: 0:42 of 10:00." {
		t.Errorf("status details line = %q", got)
	}
	if got := mute.voiceDetails(rel, ann); got != "" {
		t.Errorf("status details without a speech model = %q", got)
	}
}
