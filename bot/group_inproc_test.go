package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// Two allowed members of one group.
const (
	groupMemberA = 111
	groupMemberB = 222
	groupChat    = -100500
)

// newGroupHarness is a harness allowing groupMemberA and groupMemberB, whose Telegram
// channel paces a group's messages 30 ms apart instead of 3 s (what these tests check
// does not depend on the pacing, which channels/telegram tests), and whose model is
// groupScripted.
func newGroupHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	h.cfg.Telegram.AllowedUsers = []int64{groupMemberA, groupMemberB}
	h.opts.PerChatInterval = 10 * time.Millisecond
	h.ai.SetDefault(groupScripted)
	return h
}

// groupAnswers is a scripted model for the group tests: a run is answered by what by makes
// of its newest user message, or with a short "hello there" where by has nothing to say;
// after a tool result it answers "noted".
func groupAnswers(by func(text string) (openaitest.Reply, bool)) func(openai.ChatCompletionRequest) openaitest.Reply {
	return func(req openai.ChatCompletionRequest) openaitest.Reply {
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return openaitest.Answer("noted", "active", 0.9)
		}
		if r, ok := by(groupLastUser(req)); ok {
			return r
		}
		return openaitest.Answer("hello there", "active", 0.9)
	}
}

// groupScripted answers a run by what its newest message asks for: "REMEMBER attr=value"
// calls core_remember, "REMIND note" schedules a reminder an hour ahead (groupAnswers
// does the rest).
var groupScripted = groupAnswers(func(text string) (openaitest.Reply, bool) {
	if _, rest, ok := strings.Cut(text, "REMEMBER "); ok {
		attr, val, _ := strings.Cut(strings.Fields(rest)[0], "=")
		return openaitest.Tool("core_remember", fmt.Sprintf(`{"attribute":%q,"value":%q}`, attr, val)), true
	}
	if _, rest, ok := strings.Cut(text, "REMIND "); ok {
		return openaitest.Tool("core_schedule", fmt.Sprintf(`{"note":%q,"delay_seconds":3600,"at":null,"cron":null,"kind":"reminder","reason":"asked"}`, strings.TrimSpace(rest))), true
	}
	return openaitest.Reply{}, false
})

// groupMention addresses text to the bot, as a group member writes to it.
func groupMention(text string) string { return "@" + telegramtest.DefaultBotName + " " + text }

// groupLastUser is the content of req's last user message.
func groupLastUser(req openai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == openai.ChatMessageRoleUser {
			return m.Content
		}
	}
	return ""
}

// groupFinalUser is the content of a request's last user message.
func groupFinalUser(r openaitest.Request) string { return groupLastUser(r.Body) }

// groupFirstRequestWith returns the first request (a run's opening call, not a tool
// follow-up) whose final user message contains s.
func groupFirstRequestWith(t *testing.T, ai *openaitest.Server, s string) openaitest.Request {
	t.Helper()
	for _, r := range ai.Requests() {
		last := r.Body.Messages[len(r.Body.Messages)-1]
		if last.Role != openai.ChatMessageRoleTool && strings.Contains(groupFinalUser(r), s) {
			return r
		}
	}
	t.Fatalf("no model request answers %q", s)
	return openaitest.Request{}
}

// groupWaitSent waits until chat has n messages and returns the chat's messages.
func groupWaitSent(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat int64, n int) []telegramtest.Message {
	t.Helper()
	if err := tg.WaitFor(ctx, func() bool { return len(tg.SentTo(chat)) >= n }); err != nil {
		t.Fatalf("waiting for %d messages to chat %d: %v; got %d", n, chat, err, len(tg.SentTo(chat)))
	}
	return tg.SentTo(chat)
}

// groupTalk is a conversation with the harness's members in groupChat and in private: each
// method sends one thing and waits for the chat's next message, counting each chat's
// messages.
type groupTalk struct {
	t   *testing.T
	ctx context.Context
	tg  *telegramtest.Server
	n   map[int64]int // the messages each chat has had
}

func newGroupTalk(t *testing.T, ctx context.Context, tg *telegramtest.Server) *groupTalk {
	return &groupTalk{t: t, ctx: ctx, tg: tg, n: map[int64]int{}}
}

// next waits for chat's next message and returns it.
func (g *groupTalk) next(chat int64) telegramtest.Message {
	g.t.Helper()
	g.n[chat]++
	return groupWaitSent(g.ctx, g.t, g.tg, chat, g.n[chat])[g.n[chat]-1]
}

// say is text from user in the group, and the group's next message.
func (g *groupTalk) say(user int64, text string) telegramtest.Message {
	g.t.Helper()
	g.tg.PushGroupText(user, groupChat, text)
	return g.next(groupChat)
}

// press is user pressing the button carrying data in the group, and the group's next message.
func (g *groupTalk) press(user int64, data string) telegramtest.Message {
	g.t.Helper()
	g.tg.PushCallback(user, groupChat, data)
	return g.next(groupChat)
}

// private is text from user in their private chat, and that chat's next message.
func (g *groupTalk) private(user int64, text string) telegramtest.Message {
	g.t.Helper()
	g.tg.PushText(user, user, text)
	return g.next(user)
}

// forget is user's /forget in private, confirmed with its button; it fails the test
// unless anima says it is done.
func (g *groupTalk) forget(user int64) {
	g.t.Helper()
	g.private(user, "/forget")
	g.tg.PushCallback(user, user, fmt.Sprintf("/forget yes %d", user))
	if got := g.next(user).Visible; !strings.HasPrefix(got, "Done.") {
		g.t.Fatalf("confirmation = %q", got)
	}
}

// TestGroupRunsKeepMembersApart: two members' messages in one poll batch are two runs,
// each about its own sender; a fact told in a group is that member's group fact; what a
// member told anima in private never reaches the group's prompt.
func TestGroupRunsKeepMembersApart(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	tg, ai := h.tg, h.ai
	ctx := testCtx(t, 60*time.Second)

	// A tells anima something private.
	_, stop := h.start()
	tg.PushText(groupMemberA, groupMemberA, "REMEMBER diagnosis=secretflu")
	groupWaitSent(ctx, t, tg, groupMemberA, 1)
	stop()

	// A and B write in the group; both messages land in one poll batch.
	tg.PushGroupText(groupMemberA, groupChat, groupMention("hello from A"))
	tg.PushGroupText(groupMemberB, groupChat, groupMention("REMEMBER colour=green"))
	_, stop = h.start()
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tg.WaitFor(short, func() bool { return len(tg.SentTo(groupChat)) >= 2 }); err != nil {
		t.Fatalf("two members' messages in one batch got %d answer(s), want one run (and answer) per sender: %v",
			len(tg.SentTo(groupChat)), err)
	}
	for _, r := range ai.Requests() {
		if f := groupFinalUser(r); strings.Contains(f, "hello from A") && strings.Contains(f, "colour=green") {
			t.Errorf("one run answered both members:\n%s", f)
		}
	}
	runA := groupFirstRequestWith(t, ai, "hello from A")
	runB := groupFirstRequestWith(t, ai, "colour=green")
	sysB := runB.Body.Messages[0].Content
	if !strings.Contains(sysB, `"User222"`) || strings.Contains(sysB, "User111") {
		t.Errorf("B's run is not about B:\n%s", sysB)
	}
	if !strings.Contains(runA.Body.Messages[0].Content, `"User111"`) {
		t.Errorf("A's run is not about A:\n%s", runA.Body.Messages[0].Content)
	}

	// B asks again: B's group fact is there; A asks: it is not (it is B's).
	tg.PushGroupText(groupMemberB, groupChat, groupMention("what do you know about me"))
	groupWaitSent(ctx, t, tg, groupChat, 3)
	tg.PushGroupText(groupMemberA, groupChat, groupMention("and about me"))
	groupWaitSent(ctx, t, tg, groupChat, 4)
	stop()

	askB := groupFirstRequestWith(t, ai, "what do you know about me")
	askA := groupFirstRequestWith(t, ai, "and about me")
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
	for _, m := range tg.SentTo(groupChat) {
		replies[m.ReplyTo] = true
	}
	if len(replies) != 4 {
		t.Errorf("group answers reply to %d distinct messages, want 4 (one per message)", len(replies))
	}
}

var groupReminderID = regexp.MustCompile(`• (\S+) — `)

// TestGroupCommandsStayWithTheirOwner: a second member can neither see nor change
// another member's reminders, history or facts through /reminders, /cancel, /forget or
// the other's confirmation button; a member's own /forget removes their group data too.
func TestGroupCommandsStayWithTheirOwner(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	tg, ai := h.tg, h.ai
	ctx := testCtx(t, 90*time.Second)
	h.run()

	talk := newGroupTalk(t, ctx, tg)
	say, press := talk.say, talk.press

	say(groupMemberA, groupMention("REMIND water the plants of A"))
	say(groupMemberA, groupMention("REMEMBER pet=cat"))
	list := say(groupMemberA, "/reminders")
	m := groupReminderID.FindStringSubmatch(list.Visible)
	if m == nil {
		t.Fatalf("A's /reminders shows no reminder:\n%s", list.Visible)
	}
	id := m[1]

	// Probe 1: B's /reminders.
	if got := say(groupMemberB, "/reminders"); strings.Contains(got.Visible, "plants of A") {
		t.Errorf("probe /reminders: B sees A's reminder:\n%s", got.Visible)
	}
	// Probe 2: B's /cancel with A's id.
	if got := say(groupMemberB, "/cancel "+id); strings.Contains(got.Visible, "Cancelled") {
		t.Errorf("probe /cancel: B cancelled A's reminder: %s", got.Visible)
	}
	if got := say(groupMemberA, "/reminders"); !strings.Contains(got.Visible, "plants of A") {
		t.Errorf("after B's /cancel, A's reminder is gone:\n%s", got.Visible)
	}
	// Probe 3: B presses the button under A's /forget.
	ask := say(groupMemberA, "/forget")
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
	if got := press(groupMemberB, yes); !strings.Contains(got.Visible, "isn't yours") {
		t.Errorf("probe A's button pressed by B: answer %q, want a short \"this button isn't yours\"", got.Visible)
	}
	if got := say(groupMemberA, "/reminders"); !strings.Contains(got.Visible, "plants of A") {
		t.Errorf("after B pressed A's button, A's reminder is gone:\n%s", got.Visible)
	}
	// Probe 4: B's own /forget.
	say(groupMemberB, "/forget yes")
	if got := say(groupMemberA, "/reminders"); !strings.Contains(got.Visible, "plants of A") {
		t.Errorf("probe /forget by B: A's reminder is gone:\n%s", got.Visible)
	}
	say(groupMemberA, groupMention("after B forgot"))
	if r := groupFirstRequestWith(t, ai, "after B forgot"); !strings.Contains(string(r.Raw), "plants of A") ||
		!strings.Contains(string(r.Raw), "pet: cat") {
		t.Errorf("probe /forget by B: A's group history or facts are gone:\n%s", r.Raw)
	}

	// A's own /forget (A's button) removes A's group data and says what it kept.
	done := press(groupMemberA, yes)
	if !strings.Contains(done.Visible, "Done") || !strings.Contains(done.Visible, "kept") {
		t.Errorf("A's /forget confirmation does not say what it kept: %q", done.Visible)
	}
	if got := say(groupMemberA, "/reminders"); strings.Contains(got.Visible, "plants of A") {
		t.Errorf("A forgot, but A's group reminder remains:\n%s", got.Visible)
	}
	say(groupMemberB, groupMention("after A forgot"))
	r := groupFirstRequestWith(t, ai, "after A forgot")
	for _, s := range []string{"plants of A", "pet: cat", "after B forgot"} {
		if strings.Contains(string(r.Raw), s) {
			t.Errorf("A forgot, but %q is still in the group's prompt:\n%s", s, r.Raw)
		}
	}

	// Probe 5: /quiet and /timezone change what the whole group shares: B, a member,
	// is refused; A, an admin (getChatMember), is not.
	tg.SetMember(groupChat, groupMemberA, telegramtest.StatusAdmin)
	for _, cmd := range []string{"/quiet 2", "/timezone Asia/Tokyo"} {
		if got := say(groupMemberB, cmd); !strings.Contains(got.Visible, "Only this group's admins") {
			t.Errorf("probe %s by B, a member: answer %q, want a refusal", cmd, got.Visible)
		}
		if got := say(groupMemberA, cmd); strings.Contains(got.Visible, "admins") {
			t.Errorf("probe %s by A, an admin: answer %q, want it done", cmd, got.Visible)
		}
	}
	if got := say(groupMemberB, "/timezone"); !strings.Contains(got.Visible, "Asia/Tokyo") {
		t.Errorf("the group's zone after A's /timezone: %q", got.Visible)
	}
	for _, c := range tg.CallsTo("getChatMember") {
		if c.Status != 200 {
			t.Errorf("getChatMember answered %d: %v", c.Status, c.Params)
		}
	}
}

// TestHowTheyAreKeptPerMemberShownAndForgotten (issue 25 item 4): "STATE text" makes the
// model note how the sender is (core_how_they_are). Member A's private note and A's note
// in the group are two notes; the group's next prompt shows each member's note under
// their name and never A's private one, and a plain message still costs one model call;
// /thoughts shows each person their own note of that chat, without one; A's /forget
// leaves neither of A's notes in the store file, and B's stays.
func TestHowTheyAreKeptPerMemberShownAndForgotten(t *testing.T) {
	t.Parallel()
	const (
		privateWord = "wombatprivate"
		groupWord   = "wombatgroup"
		keptWord    = "koalakept"
	)
	h := newGroupHarness(t)
	tg, ai := h.tg, h.ai
	ai.SetDefault(groupAnswers(func(text string) (openaitest.Reply, bool) {
		_, rest, ok := strings.Cut(text, "STATE ")
		return openaitest.Tool("core_how_they_are", fmt.Sprintf(`{"note":%q,"replace":false}`, strings.TrimSpace(rest))), ok
	}))
	ctx := testCtx(t, 90*time.Second)
	store := h.cfg.Storage.Path
	h.run()

	talk := newGroupTalk(t, ctx, tg)
	sayPrivate := func(user int64, text string) string { return talk.private(user, text).Visible }
	say := func(user int64, text string) string { return talk.say(user, text).Visible }
	sayPrivate(groupMemberA, "STATE "+privateWord+": exhausted, big deadline Friday")
	say(groupMemberA, groupMention("STATE "+groupWord+": moving house this week"))
	say(groupMemberB, groupMention("STATE "+keptWord+": back from holiday"))
	say(groupMemberB, groupMention("how is everyone?"))

	run := groupFirstRequestWith(t, ai, "how is everyone?")
	prompt := string(run.Raw)
	for _, w := range []string{`\"User222\":\n[`, keptWord, `\"User111\":\n[`, groupWord} {
		if !strings.Contains(prompt, w) {
			t.Errorf("the group's prompt lacks %q:\n%s", w, prompt)
		}
	}
	if strings.Contains(prompt, privateWord) {
		t.Errorf("A's private note reached the group's prompt:\n%s", prompt)
	}
	calls := len(ai.Requests())
	plain := 0
	for _, r := range ai.Requests() {
		if strings.Contains(groupFinalUser(r), "how is everyone?") {
			plain++
		}
	}
	if plain != 1 {
		t.Errorf("a plain message cost %d model calls, want 1", plain)
	}

	// In private A reads both of A's notes (the group's marked as such), never B's; in the
	// group /thoughts reads out no one's note (issue 33: it posted the sender's to all).
	if got := sayPrivate(groupMemberA, "/thoughts"); !strings.Contains(got, privateWord) || !strings.Contains(got, "in a group we share (I keep this for 14 days):\n• "+groupWord) || strings.Contains(got, keptWord) {
		t.Errorf("A's /thoughts in private = %q, want A's private note and A's group note", got)
	}
	if got := say(groupMemberA, "/thoughts"); strings.Contains(got, groupWord) || strings.Contains(got, privateWord) || strings.Contains(got, keptWord) || !strings.Contains(got, "private chat") {
		t.Errorf("A's /thoughts in the group = %q, want no note, and a pointer to the private chat", got)
	}
	if n := len(ai.Requests()); n != calls {
		t.Errorf("/thoughts cost %d model calls, want 0", n-calls)
	}

	count := func(word string) int { return markerCount(t, store, word) }
	if count(privateWord) == 0 || count(groupWord) == 0 || count(keptWord) == 0 {
		t.Fatal("a note is not in the store file before /forget: the test proves nothing")
	}
	talk.forget(groupMemberA)
	// The compaction follows the confirmation.
	waitUntil(t, ctx, "the store file without A's notes after A's /forget", func() bool {
		return count(privateWord) == 0 && count(groupWord) == 0
	})
	if count(keptWord) == 0 {
		t.Error("B's note went with A's /forget")
	}
	if got := sayPrivate(groupMemberB, "/thoughts"); !strings.Contains(got, keptWord) {
		t.Errorf("B's /thoughts in private after A's /forget = %q, want B's group note", got)
	}
}

// TestForgetDropsAMembersQueuedGroupMessages (issue 33): member A's message and voice
// note in the group wait behind B's run, which the model holds; A's /forget in private
// lands meanwhile. Once the model answers, B's messages are answered, both of them, and
// nothing of A's: no model request or download for it, no answer, no turn in the store.
func TestForgetDropsAMembersQueuedGroupMessages(t *testing.T) {
	t.Parallel()
	const marker = "PLATYPUS-SECRET"
	h := newGroupHarness(t)
	held, gate := make(chan struct{}, 1), make(chan struct{})
	h.ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if strings.Contains(groupLastUser(req), "B first") {
			held <- struct{}{}
			<-gate
		}
		return groupScripted(req)
	})
	ctx := testCtx(t, 60*time.Second)
	addrs, stop := h.start()
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release) // before the harness stops anima

	talk := newGroupTalk(t, ctx, h.tg)
	h.tg.PushGroupText(groupMemberB, groupChat, groupMention("B first"))
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("B's run never reached the model")
	}
	h.tg.PushGroupText(groupMemberA, groupChat, groupMention("A says "+marker))
	voice := h.tg.VoiceMessage(groupMemberA, groupChat, []byte(marker), 2)
	voice.Chat.Type = models.ChatTypeSupergroup
	voice.ReplyToMessage = &models.Message{ID: 1, From: &h.tg.Bot, Chat: voice.Chat, Date: voice.Date}
	h.tg.PushMessage(voice)
	h.tg.PushGroupText(groupMemberB, groupChat, groupMention("B second"))
	talk.forget(groupMemberA)
	release()

	talk.next(groupChat)
	talk.next(groupChat)
	settle(t, addrs.Metrics)
	if sent := h.tg.SentTo(groupChat); len(sent) != 2 {
		t.Errorf("the group got %d messages, want B's two answers alone: %+v", len(sent), sent)
	}
	for _, r := range h.ai.Requests() {
		if strings.Contains(string(r.Raw), marker) || strings.Contains(groupFinalUser(r), "A says") {
			t.Errorf("A's words reached the model after A's /forget:\n%s", r.Raw)
		}
	}
	if d := h.tg.Downloads(); len(d) != 0 {
		t.Errorf("A's voice note was downloaded after A's /forget: %+v", d)
	}
	for _, want := range []string{"B first", "B second"} {
		groupFirstRequestWith(t, h.ai, want)
	}
	turns, err := h.stopped(stop).History(groupChat, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tu := range turns {
		if tu.User == groupMemberA || strings.Contains(tu.Text, marker) {
			t.Errorf("the group's history holds A's turn after A's /forget: %+v", tu)
		}
	}
	if len(turns) != 4 {
		t.Errorf("the group's history holds %d turns, want B's two messages and their answers: %+v", len(turns), turns)
	}
}
