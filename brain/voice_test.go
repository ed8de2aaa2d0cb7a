package brain_test

import (
	"testing"

	"github.com/anima-bot/anima/brain"
)

func TestSpeaks(t *testing.T) {
	t.Parallel()
	const ann, bob = 7, 8
	private := brain.Relationship{Chat: ann, User: ann}
	on, off := private, private
	on.SetVoicePref(ann, brain.VoiceOn)
	off.SetVoicePref(ann, brain.VoiceNo)
	group := brain.Relationship{Chat: -100, Group: true}
	groupOn := group
	groupOn.GroupVoice = true
	groupOnBobOff := groupOn
	groupOnBobOff.SetVoicePref(bob, brain.VoiceNo)
	groupBobOn := group
	groupBobOn.SetVoicePref(bob, brain.VoiceOn)
	for _, tc := range []struct {
		name    string
		mode    brain.VoiceMode
		rel     brain.Relationship
		user    int64
		byVoice bool
		want    bool
	}{
		{"mirror answers a voice note", brain.VoiceMirror, private, ann, true, true},
		{"mirror answers text with text", brain.VoiceMirror, private, ann, false, false},
		{"always speaks", brain.VoiceAlways, private, ann, false, true},
		{"off stays text", brain.VoiceOff, private, ann, true, false},
		{"a person's on beats off", brain.VoiceOff, on, ann, false, true},
		{"a person's off beats always", brain.VoiceAlways, off, ann, true, false},
		{"a group gets text", brain.VoiceAlways, group, bob, true, false},
		{"a member's on needs the group's", brain.VoiceMirror, groupBobOn, bob, true, false},
		{"a group that turned voice on mirrors", brain.VoiceMirror, groupOn, bob, true, true},
		{"a member's own off in such a group", brain.VoiceMirror, groupOnBobOff, bob, true, false},
		{"another member keeps the mode", brain.VoiceMirror, groupOnBobOff, ann, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := brain.Speaks(tc.mode, tc.rel, tc.user, tc.byVoice); got != tc.want {
				t.Fatalf("Speaks = %v, want %v", got, tc.want)
			}
		})
	}
	if private.Voice != nil {
		t.Fatal("SetVoicePref changed the map of a copy")
	}
}

func TestByVoice(t *testing.T) {
	t.Parallel()
	voice := brain.Signal{Type: brain.SignalUserMessage, User: 7, Media: &brain.Media{Kind: brain.MediaVoice}}
	audio := brain.Signal{Type: brain.SignalUserMessage, User: 7, Media: &brain.Media{Kind: brain.MediaAudio}}
	text := brain.Signal{Type: brain.SignalUserMessage, User: 7, Text: "hi"}
	for _, tc := range []struct {
		name string
		sigs []brain.Signal
		user int64
		want bool
	}{
		{"a voice note", []brain.Signal{text, voice}, 7, true},
		{"someone else's", []brain.Signal{voice}, 8, false},
		{"an audio file is not a voice note", []brain.Signal{audio}, 7, false},
		{"text", []brain.Signal{text}, 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := brain.ByVoice(tc.sigs, tc.user); got != tc.want {
				t.Fatalf("ByVoice = %v, want %v", got, tc.want)
			}
		})
	}
}
