package bot

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/storage"
)

// fakeBook is an in-memory reminderBook.
type fakeBook struct{ items []brain.ScheduleItem }

func (b *fakeBook) List(chat int64) ([]brain.ScheduleItem, error) {
	var out []brain.ScheduleItem
	for _, it := range b.items {
		if it.Chat == chat {
			out = append(out, it)
		}
	}
	return out, nil
}

func (b *fakeBook) Cancel(chat int64, id string) (bool, error) {
	for i, it := range b.items {
		if it.Chat == chat && it.ID == id {
			b.items = append(b.items[:i], b.items[i+1:]...)
			return true, nil
		}
	}
	return false, nil
}

// fakeForgetter records whom it forgot.
type fakeForgetter struct {
	users []int64
	rep   storage.ForgetReport
}

func (f *fakeForgetter) ForgetUser(user int64) (storage.ForgetReport, error) {
	f.users = append(f.users, user)
	return f.rep, nil
}

// TestGroupCommandsActForTheSender: in a group /reminders, /cancel and /forget see only the
// sender's own items, and a confirmation button works only for whoever asked for it.
func TestGroupCommandsActForTheSender(t *testing.T) {
	t.Parallel()
	const ann, ben, grp = 1, 2, -100
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	book := &fakeBook{items: []brain.ScheduleItem{
		{ID: "ann1", Chat: grp, User: ann, Note: "ann's plants", Due: now.Add(time.Hour)},
		{ID: "ben1", Chat: grp, User: ben, Note: "ben's bins", Due: now.Add(time.Hour)},
	}}
	fg := &fakeForgetter{rep: storage.ForgetReport{Chats: []int64{grp}, Turns: 4, Reminders: 1, Facts: 2}}
	c := &commands{persona: "Anima", forget: fg, reminders: book, format: func(items []brain.ScheduleItem, _ int, _ *time.Location, _ time.Time) string {
		var ids []string
		for _, it := range items {
			ids = append(ids, it.ID+":"+it.Note)
		}
		return "list " + strings.Join(ids, ",")
	}}
	view := loop.CommandView{Now: now, Loc: time.UTC, Rel: brain.Relationship{Chat: grp, User: ann, Group: true}}
	run := func(user int64, text string) loop.CommandResult {
		t.Helper()
		res, err := c.Command(context.Background(), brain.Signal{Type: brain.SignalCommand, Chat: grp, User: user, Text: text}, view)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	text := func(r loop.CommandResult) string { return r.Reply[0].Text }

	if got := text(run(ben, "/reminders")); got != "list ben1:ben's bins" {
		t.Errorf("ben's /reminders = %q, want only ben's", got)
	}
	if got := text(run(ben, "/cancel ann1")); strings.Contains(got, "Cancelled") || len(book.items) != 2 {
		t.Errorf("ben's /cancel of ann's reminder = %q; items %v", got, book.items)
	}
	if got := text(run(ben, "/cancel ben1")); got != "Cancelled ben1." || len(book.items) != 1 {
		t.Errorf("ben's /cancel of his own = %q; items %v", got, book.items)
	}

	ask := run(ann, "/forget")
	yes := ask.Reply[0].Buttons[0][0].Data
	if yes != "/forget yes 1" {
		t.Fatalf("ann's button data %q, want the asker's id in it", yes)
	}
	if r := run(ben, yes); text(r) != notYours || r.Forget || len(fg.users) != 0 {
		t.Errorf("ben pressing ann's button: %q forget=%v forgot %v", text(r), r.Forget, fg.users)
	}
	if r := run(ben, "/forget no 1"); text(r) != notYours {
		t.Errorf("ben pressing ann's no: %q", text(r))
	}
	r := run(ann, yes)
	if !r.Forget || len(fg.users) != 1 || fg.users[0] != ann {
		t.Fatalf("ann's own button: forget=%v forgot %v", r.Forget, fg.users)
	}
	for _, s := range []string{"1 group", "4 messages", "1 reminder", "2 facts", "What I kept", "summaries"} {
		if !strings.Contains(text(r), s) {
			t.Errorf("confirmation %q lacks %q", text(r), s)
		}
	}
	// A typed /forget yes in a group forgets the sender, never the group.
	if r := run(ben, "/forget yes"); !r.Forget || fg.users[1] != ben {
		t.Errorf("ben's /forget yes forgot %v", fg.users)
	}
}

// TestPrivateForgetAnswersAsBefore: in a private chat with no groups, /forget's buttons
// still read "/forget yes…" and the confirmation is unchanged.
func TestPrivateForgetAnswersAsBefore(t *testing.T) {
	t.Parallel()
	fg := &fakeForgetter{}
	c := &commands{forget: fg, reminders: &fakeBook{}}
	sig := brain.Signal{Type: brain.SignalCommand, Chat: 5, User: 5, Text: "/forget yes 5"}
	res, err := c.Command(context.Background(), sig, loop.CommandView{Loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	want := "Done. I have deleted everything I had stored about you: our conversation, what I remembered and your reminders."
	if !res.Forget || res.Reply[0].Text != want || fg.users[0] != 5 {
		t.Errorf("private /forget yes = %q forget=%v forgot %v", res.Reply[0].Text, res.Forget, fg.users)
	}
}

// fakeAdmins answers IsAdmin from a set, or fails.
type fakeAdmins struct {
	admins map[int64]bool
	err    error
	asked  int
}

func (f *fakeAdmins) IsAdmin(_ context.Context, _, user int64) (bool, error) {
	f.asked++
	return f.admins[user], f.err
}

// TestGroupSettingsAreForAdmins: in a group, /quiet and /timezone change what every
// member shares, so only the group's admins may use them; showing the zone is for
// everyone, a private chat is its user's own, and a failed check is an error (logged,
// "didn't work") that changes nothing.
func TestGroupSettingsAreForAdmins(t *testing.T) {
	t.Parallel()
	const group, ann, ben = -100, int64(1), int64(2)
	admins := &fakeAdmins{admins: map[int64]bool{ann: true}}
	c := &commands{policy: brain.DefaultProactivePolicy(), admins: admins}
	view := loop.CommandView{Loc: time.UTC, Now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	run := func(chat, user int64, text string) (loop.CommandResult, error) {
		return c.Command(context.Background(), brain.Signal{Type: brain.SignalCommand, Chat: chat, User: user, Text: text}, view)
	}
	for _, cmd := range []string{"/quiet 2", "/timezone Europe/Berlin"} {
		res, err := run(group, ben, cmd)
		if err != nil || len(res.Intents) != 0 || !strings.Contains(res.Reply[0].Text, "Only this group's admins") {
			t.Errorf("member's %s in a group = %+v, %v; want a refusal and no change", cmd, res, err)
		}
		if res, err := run(group, ann, cmd); err != nil || len(res.Intents) != 1 {
			t.Errorf("admin's %s in a group = %+v, %v; want it done", cmd, res, err)
		}
		if res, err := run(ben, ben, cmd); err != nil || len(res.Intents) != 1 {
			t.Errorf("%s in the member's private chat = %+v, %v; want it done", cmd, res, err)
		}
	}
	asked := admins.asked
	if res, err := run(group, ben, "/timezone"); err != nil || !strings.Contains(res.Reply[0].Text, "time zone is UTC") || admins.asked != asked {
		t.Errorf("member's bare /timezone in a group = %+v, %v (admin checks %d → %d); want the zone shown without a check", res, err, asked, admins.asked)
	}
	admins.err = errors.New("telegram getChatMember: 502")
	if res, err := run(group, ann, "/quiet"); err == nil || len(res.Intents) != 0 {
		t.Errorf("/quiet with the admin check failing = %+v, %v; want an error and no change", res, err)
	}
}

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
