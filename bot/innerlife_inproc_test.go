package bot_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// innerlifeCheckinScript makes the model open a concern with a check-in at at on the
// user's message, and answer any run without a user message (anima writing first) with a
// question about it.
func innerlifeCheckinScript(ai *openaitest.Server, at time.Time) {
	ai.Enqueue(
		openaitest.Tool("innerlife_concern", fmt.Sprintf(`{"action":"open","id":null,"summary":"driving test this afternoon",`+
			`"kind":"event","check_in_at":%q,"note":null}`, at.Format(time.RFC3339))),
		openaitest.Answer("Good luck — you've got this!", "active", 0.95),
	)
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == openai.ChatMessageRoleSystem {
			return openaitest.Answer("How did the driving test go?", "awaiting_answer", 0.9)
		}
		return openaitest.Echo(req)
	})
}

// innerlifeCheckinPolicy is the proactive section of the check-in tests: contact on,
// nothing but a check-in due within the test.
func innerlifeCheckinPolicy(h *harness, quiet brain.QuietHours) {
	h.cfg.Proactive.Enabled = true
	h.cfg.Proactive.MinSilence = config.Duration(time.Hour)
	h.cfg.Proactive.Cooldown = config.Duration(time.Second)
	h.cfg.Proactive.FollowupAfter = config.Duration(time.Hour)
	h.cfg.Proactive.QuietHours = quiet
	h.cfg.Proactive.MaxPerDay = 5
}

// TestConcernCheckinAskedOnce: a concern opened with a check-in 5 s ahead is asked about
// once, about 5 s later, by a proactive run whose prompt names the concern. On the manual
// clock: the check-in is timed by the clock's time at the step whose tick woke it.
func TestConcernCheckinAskedOnce(t *testing.T) {
	t.Parallel()
	h, clock := proactiveHarness(t, testNoon())
	innerlifeCheckinPolicy(h, brain.QuietHours{})
	var logs braintest.Buffer
	h.opts.Logger = bot.NewLogger(h.cfg.Log, &logs)
	addrs, stop := h.start()
	c := newProactiveClock(t, clock, addrs.Metrics)
	innerlifeCheckinScript(h.ai, clock.Now().Add(5*time.Second).Truncate(time.Second).Add(time.Second))
	h.say("I have my driving test this afternoon!")
	c.settle()
	gap := c.untilWakes(brain.ReasonConcernCheckin, 1, clock.Now(), 12*time.Second, time.Second)
	sent, err := h.tg.WaitSent(waitCtx(t), 2)
	if err != nil {
		t.Fatalf("the check-in never came: %v", err)
	}
	t.Logf("check-in asked %v after the answer (planned 5 s ahead)", gap)
	if gap < 3*time.Second || gap > 12*time.Second {
		t.Errorf("check-in came %v after the answer, want about 5 s", gap)
	}
	if sent[1].Visible != "How did the driving test go?" {
		t.Errorf("check-in = %q", sent[1].Visible)
	}
	reqs := h.ai.Requests()
	last := string(reqs[len(reqs)-1].Raw)
	for _, want := range []string{"driving test this afternoon", "due check-in", "You planned to check in about"} {
		if !strings.Contains(last, want) {
			t.Errorf("the check-in's prompt lacks %q:\n%s", want, last)
		}
	}
	c.advance(4*time.Second, time.Second) // a second check-in would come now
	stop()
	// The wake's own line (the "sent" line of its message names the reason too).
	if log := logs.String(); strings.Count(log, `msg="cognition wake" component=brain reason=concern_checkin`) != 1 {
		t.Errorf("want exactly one wake with reason concern_checkin in the log:\n%s", log)
	}
	if n := len(h.tg.Sent()); n != 2 {
		t.Errorf("%d messages, want the answer and exactly one check-in", n)
	}
	if n := len(h.ai.Requests()); n != 3 {
		t.Errorf("%d model calls, want 3 (tool call, answer, one check-in run)", n)
	}
	if v := h.ai.Violations(); len(v) > 0 {
		t.Errorf("requests broke the API's rules: %v", v)
	}
}

// TestConcernCheckinHeldInQuietHours: the same check-in inside quiet hours sends nothing
// and costs no model call.
func TestConcernCheckinHeldInQuietHours(t *testing.T) {
	t.Parallel()
	now := testNoon()
	h, clock := proactiveHarness(t, now)
	innerlifeCheckinPolicy(h, proactiveQuiet(t, now.Add(-time.Hour).Format("15:04")+"-"+now.Add(time.Hour).Format("15:04")))
	addrs, stop := h.start()
	c := newProactiveClock(t, clock, addrs.Metrics)
	innerlifeCheckinScript(h.ai, clock.Now().Add(5*time.Second))
	h.say("I have my driving test this afternoon!")
	c.advance(9*time.Second, time.Second) // the check-in is due after 5 s; quiet hours hold it
	stop()
	if n := len(h.tg.Sent()); n != 1 {
		t.Errorf("%d messages, want only the answer: quiet hours hold the check-in", n)
	}
	if n := len(h.ai.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2 (tool call and answer): a held check-in costs nothing", n)
	}
}

// TestInnerLifeKeptPerMember (issue 16): A's message, in private and in a group, makes the
// model open a concern and write a journal entry about A. In the group, B's /status and
// B's memory search show none of it, while A's /status does; A's /forget then leaves the
// concern and the entry of neither chat in the store file nor in a later backup (taken
// through the control socket, as `anima backup` does).
func TestInnerLifeKeptPerMember(t *testing.T) {
	t.Parallel()
	const marker = "zanzibarhearing"
	h := newGroupHarness(t)
	tg, ai := h.tg, h.ai
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return openaitest.Answer("noted", "active", 0.9)
		}
		text := groupLastUser(req)
		switch {
		case strings.Contains(text, "CONCERN"):
			return openaitest.Reply{ToolCalls: []openaitest.Call{
				{Name: "innerlife_concern", Args: `{"action":"open","id":null,"summary":"the divorce ` + marker + ` on Friday",` +
					`"kind":"event","check_in_at":null,"note":null}`},
				{Name: "innerlife_journal", Args: `{"kind":"observation","text":"They dread the ` + marker + `."}`},
			}}
		case strings.Contains(text, "SEARCH"):
			return openaitest.Tool("core_memory_search", `{"query":"divorce `+marker+`"}`)
		}
		return openaitest.Answer("hello there", "active", 0.9)
	})
	dir := t.TempDir()
	store := h.cfg.Storage.Path
	ctx := testCtx(t, 90*time.Second)
	_, stop := h.start()
	defer stop()

	private, inGroup := 0, 0
	sayPrivate := func(text string) string {
		t.Helper()
		private++
		tg.PushText(groupMemberA, groupMemberA, text)
		return groupWaitSent(ctx, t, tg, groupMemberA, private)[private-1].Visible
	}
	say := func(user int64, text string) string {
		t.Helper()
		inGroup++
		tg.PushGroupText(user, groupChat, text)
		return groupWaitSent(ctx, t, tg, groupChat, inGroup)[inGroup-1].Visible
	}
	sayPrivate("CONCERN my hearing is on Friday")
	say(groupMemberA, groupMention("CONCERN my hearing is on Friday"))

	if got := say(groupMemberB, "/status"); strings.Contains(got, marker) {
		t.Errorf("B's /status in the group lists A's concern:\n%s", got)
	}
	say(groupMemberB, groupMention("SEARCH"))
	for _, r := range ai.Requests() {
		if last := r.Body.Messages[len(r.Body.Messages)-1]; last.Role == openai.ChatMessageRoleTool && strings.Contains(last.Content, marker) {
			t.Errorf("B's memory search in the group found A's inner life:\n%s", last.Content)
		}
	}
	if got := say(groupMemberA, "/status"); !strings.Contains(got, marker) {
		t.Fatalf("A's /status in the group lacks A's own concern (the test proves nothing):\n%s", got)
	}

	count := func(file string) int { return markerCount(t, file, marker) }
	backup := func(name string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		if _, err := bot.Backup(context.Background(), store, out); err != nil {
			t.Fatalf("hot backup: %v", err)
		}
		return out
	}
	if n := count(backup("before.db")); n == 0 {
		t.Fatal("the marker is not in a backup before /forget: the test proves nothing")
	}
	sayPrivate("/forget")
	tg.PushCallback(groupMemberA, groupMemberA, fmt.Sprintf("/forget yes %d", groupMemberA))
	private++
	if got := groupWaitSent(ctx, t, tg, groupMemberA, private)[private-1].Visible; !strings.HasPrefix(got, "Done.") {
		t.Fatalf("confirmation = %q", got)
	}
	// The compaction follows the confirmation.
	waitUntil(t, ctx, "the store file without A's inner life after A's /forget", func() bool { return count(store) == 0 })
	if n := count(backup("after.db")); n != 0 {
		t.Errorf("a backup taken after A's /forget holds A's inner life %d times", n)
	}
}
