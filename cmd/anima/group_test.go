package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// Two allowed members of one group.
const (
	memberA = 111
	memberB = 222
	group   = -100500
)

// writeGroupConfig writes a configuration allowing memberA and memberB.
func writeGroupConfig(t *testing.T, dir, tgURL, aiURL string) string {
	t.Helper()
	return writeConfigWith(t, dir, testConfig{tgURL: tgURL, aiURL: aiURL, users: []int64{memberA, memberB}})
}

// scripted answers a run by what its newest message asks for: "REMEMBER attr=value"
// calls core_remember, "REMIND note" schedules a reminder an hour ahead, anything else
// gets a short answer; after a tool result it answers "noted".
func scripted(req openai.ChatCompletionRequest) openaitest.Reply {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == openai.ChatMessageRoleTool {
		return openaitest.Answer("noted", "active", 0.9)
	}
	text := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			text = req.Messages[i].Content
			break
		}
	}
	if _, rest, ok := strings.Cut(text, "REMEMBER "); ok {
		attr, val, _ := strings.Cut(strings.Fields(rest)[0], "=")
		return openaitest.Tool("core_remember", fmt.Sprintf(`{"attribute":%q,"value":%q}`, attr, val))
	}
	if _, rest, ok := strings.Cut(text, "REMIND "); ok {
		return openaitest.Tool("core_schedule", fmt.Sprintf(`{"note":%q,"delay_seconds":3600,"at":null,"cron":null,"kind":"reminder","reason":"asked"}`, strings.TrimSpace(rest)))
	}
	return openaitest.Answer("hello there", "active", 0.9)
}

func mention(text string) string { return "@" + telegramtest.DefaultBotName + " " + text }

// finalUser is the content of a request's last user message.
func finalUser(r openaitest.Request) string {
	for i := len(r.Body.Messages) - 1; i >= 0; i-- {
		if m := r.Body.Messages[i]; m.Role == openai.ChatMessageRoleUser {
			return m.Content
		}
	}
	return ""
}

// firstRequestWith returns the first request (a run's opening call, not a tool
// follow-up) whose final user message contains s.
func firstRequestWith(t *testing.T, ai *openaitest.Server, s string) openaitest.Request {
	t.Helper()
	for _, r := range ai.Requests() {
		last := r.Body.Messages[len(r.Body.Messages)-1]
		if last.Role != openai.ChatMessageRoleTool && strings.Contains(finalUser(r), s) {
			return r
		}
	}
	t.Fatalf("no model request answers %q", s)
	return openaitest.Request{}
}

func waitSentTo(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat int64, n int) []telegramtest.Message {
	t.Helper()
	if err := tg.WaitFor(ctx, func() bool { return len(tg.SentTo(chat)) >= n }); err != nil {
		t.Fatalf("waiting for %d messages to chat %d: %v; got %d", n, chat, err, len(tg.SentTo(chat)))
	}
	return tg.SentTo(chat)
}

// TestGroupRunsKeepMembersApart: two members' messages in one poll batch are two runs,
// each about its own sender; a fact told in a group is that member's group fact; what a
// member told anima in private never reaches the group's prompt.
func TestGroupRunsKeepMembersApart(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(scripted)
	dir := t.TempDir()
	path := writeGroupConfig(t, dir, tg.URL, ai.URL())
	ctx := waitCtx(t, 60*time.Second)

	// A tells anima something private.
	p := start(t, "run", "--config", path)
	tg.PushText(memberA, memberA, "REMEMBER diagnosis=secretflu")
	waitSentTo(ctx, t, tg, memberA, 1)
	p.stop(t)

	// A and B write in the group; both messages land in one poll batch.
	idA := tg.PushGroupText(memberA, group, mention("hello from A"))
	idB := tg.PushGroupText(memberB, group, mention("REMEMBER colour=green"))
	_, _ = idA, idB
	p = start(t, "run", "--config", path)
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tg.WaitFor(short, func() bool { return len(tg.SentTo(group)) >= 2 }); err != nil {
		t.Fatalf("two members' messages in one batch got %d answer(s), want one run (and answer) per sender: %v",
			len(tg.SentTo(group)), err)
	}
	for _, r := range ai.Requests() {
		if f := finalUser(r); strings.Contains(f, "hello from A") && strings.Contains(f, "colour=green") {
			t.Errorf("one run answered both members:\n%s", f)
		}
	}
	runA := firstRequestWith(t, ai, "hello from A")
	runB := firstRequestWith(t, ai, "colour=green")
	sysB := runB.Body.Messages[0].Content
	if !strings.Contains(sysB, `"User222"`) || strings.Contains(sysB, "User111") {
		t.Errorf("B's run is not about B:\n%s", sysB)
	}
	if !strings.Contains(runA.Body.Messages[0].Content, `"User111"`) {
		t.Errorf("A's run is not about A:\n%s", runA.Body.Messages[0].Content)
	}

	// B asks again: B's group fact is there; A asks: it is not (it is B's).
	tg.PushGroupText(memberB, group, mention("what do you know about me"))
	waitSentTo(ctx, t, tg, group, 3)
	tg.PushGroupText(memberA, group, mention("and about me"))
	waitSentTo(ctx, t, tg, group, 4)
	p.stop(t)

	askB := firstRequestWith(t, ai, "what do you know about me")
	askA := firstRequestWith(t, ai, "and about me")
	if !strings.Contains(string(askB.Raw), "colour: green") {
		t.Errorf("B's fact told in the group is missing from B's next group prompt:\n%s", askB.Raw)
	}
	if strings.Contains(string(askA.Raw), "colour: green") {
		t.Errorf("B's fact is in A's prompt (stored as A's):\n%s", askA.Raw)
	}
	// History keeps who said what: B's prompt shows A's earlier line under A's name.
	if !strings.Contains(string(askB.Raw), `\"User111\"`) {
		t.Errorf("B's prompt does not label A's line with A's name:\n%s", askB.Raw)
	}
	for _, r := range ai.Requests() {
		if strings.Contains(string(r.Raw), "secretflu") && strings.Contains(string(r.Raw), "group chat") {
			t.Errorf("A's private fact reached a group prompt:\n%s", r.Raw)
		}
	}
	// Each answer replies to the message it answers.
	replies := map[int]bool{}
	for _, m := range tg.SentTo(group) {
		replies[m.ReplyTo] = true
	}
	if len(replies) != 4 {
		t.Errorf("group answers reply to %d distinct messages, want 4 (one per message)", len(replies))
	}
}

var reminderID = regexp.MustCompile(`• (\S+) — `)

// TestGroupCommandsStayWithTheirOwner: a second member can neither see nor change
// another member's reminders, history or facts through /reminders, /cancel, /forget or
// the other's confirmation button; a member's own /forget removes their group data too.
func TestGroupCommandsStayWithTheirOwner(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(scripted)
	dir := t.TempDir()
	path := writeGroupConfig(t, dir, tg.URL, ai.URL())
	ctx := waitCtx(t, 90*time.Second)
	p := start(t, "run", "--config", path)
	defer p.stop(t)

	n := 0
	say := func(user int64, text string) telegramtest.Message {
		t.Helper()
		n++
		tg.PushGroupText(user, group, text)
		return waitSentTo(ctx, t, tg, group, n)[n-1]
	}
	press := func(user int64, data string) telegramtest.Message {
		t.Helper()
		n++
		tg.PushCallback(user, group, data)
		return waitSentTo(ctx, t, tg, group, n)[n-1]
	}

	say(memberA, mention("REMIND water the plants of A"))
	say(memberA, mention("REMEMBER pet=cat"))
	list := say(memberA, "/reminders")
	m := reminderID.FindStringSubmatch(list.Visible)
	if m == nil {
		t.Fatalf("A's /reminders shows no reminder:\n%s", list.Visible)
	}
	id := m[1]

	// Probe 1: B's /reminders.
	if got := say(memberB, "/reminders"); strings.Contains(got.Visible, "plants of A") {
		t.Errorf("probe /reminders: B sees A's reminder:\n%s", got.Visible)
	}
	// Probe 2: B's /cancel with A's id.
	if got := say(memberB, "/cancel "+id); strings.Contains(got.Visible, "Cancelled") {
		t.Errorf("probe /cancel: B cancelled A's reminder: %s", got.Visible)
	}
	if got := say(memberA, "/reminders"); !strings.Contains(got.Visible, "plants of A") {
		t.Errorf("after B's /cancel, A's reminder is gone:\n%s", got.Visible)
	}
	// Probe 3: B presses the button under A's /forget.
	ask := say(memberA, "/forget")
	var markup struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal(ask.ReplyMarkup, &markup); err != nil || len(markup.InlineKeyboard) == 0 {
		t.Fatalf("A's /forget has no buttons: %s (%v)", ask.ReplyMarkup, err)
	}
	yes := markup.InlineKeyboard[0][0].CallbackData
	if got := press(memberB, yes); !strings.Contains(got.Visible, "isn't yours") {
		t.Errorf("probe A's button pressed by B: answer %q, want a short \"this button isn't yours\"", got.Visible)
	}
	if got := say(memberA, "/reminders"); !strings.Contains(got.Visible, "plants of A") {
		t.Errorf("after B pressed A's button, A's reminder is gone:\n%s", got.Visible)
	}
	// Probe 4: B's own /forget.
	say(memberB, "/forget yes")
	if got := say(memberA, "/reminders"); !strings.Contains(got.Visible, "plants of A") {
		t.Errorf("probe /forget by B: A's reminder is gone:\n%s", got.Visible)
	}
	say(memberA, mention("after B forgot"))
	if r := firstRequestWith(t, ai, "after B forgot"); !strings.Contains(string(r.Raw), "plants of A") ||
		!strings.Contains(string(r.Raw), "pet: cat") {
		t.Errorf("probe /forget by B: A's group history or facts are gone:\n%s", r.Raw)
	}

	// A's own /forget (A's button) removes A's group data and says what it kept.
	done := press(memberA, yes)
	if !strings.Contains(done.Visible, "Done") || !strings.Contains(done.Visible, "kept") {
		t.Errorf("A's /forget confirmation does not say what it kept: %q", done.Visible)
	}
	if got := say(memberA, "/reminders"); strings.Contains(got.Visible, "plants of A") {
		t.Errorf("A forgot, but A's group reminder remains:\n%s", got.Visible)
	}
	say(memberB, mention("after A forgot"))
	r := firstRequestWith(t, ai, "after A forgot")
	for _, s := range []string{"plants of A", "pet: cat", "after B forgot"} {
		if strings.Contains(string(r.Raw), s) {
			t.Errorf("A forgot, but %q is still in the group's prompt:\n%s", s, r.Raw)
		}
	}

	// Probe 5: /quiet and /timezone change what the whole group shares: B, a member,
	// is refused; A, an admin (getChatMember), is not.
	tg.SetMember(group, memberA, telegramtest.StatusAdmin)
	for _, cmd := range []string{"/quiet 2", "/timezone Asia/Tokyo"} {
		if got := say(memberB, cmd); !strings.Contains(got.Visible, "Only this group's admins") {
			t.Errorf("probe %s by B, a member: answer %q, want a refusal", cmd, got.Visible)
		}
		if got := say(memberA, cmd); strings.Contains(got.Visible, "admins") {
			t.Errorf("probe %s by A, an admin: answer %q, want it done", cmd, got.Visible)
		}
	}
	if got := say(memberB, "/timezone"); !strings.Contains(got.Visible, "Asia/Tokyo") {
		t.Errorf("the group's zone after A's /timezone: %q", got.Visible)
	}
	for _, c := range tg.CallsTo("getChatMember") {
		if c.Status != 200 {
			t.Errorf("getChatMember answered %d: %v", c.Status, c.Params)
		}
	}
}
