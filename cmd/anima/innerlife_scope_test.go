package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestInnerLifeKeptPerMember (issue 16): A's message, in private and in a group, makes the
// model open a concern and write a journal entry about A. In the group, B's /status and
// B's memory search show none of it, while A's /status does; A's /forget then leaves the
// concern and the entry of neither chat in the store file nor in a later backup.
func TestInnerLifeKeptPerMember(t *testing.T) {
	const marker = "zanzibarhearing"
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return openaitest.Answer("noted", "active", 0.9)
		}
		text := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == openai.ChatMessageRoleUser {
				text = req.Messages[i].Content
				break
			}
		}
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
	path := writeGroupConfig(t, dir, tg.URL, ai.URL())
	store := filepath.Join(dir, "anima.db")
	ctx := waitCtx(t, 90*time.Second)
	p := start(t, "run", "--config", path)
	defer p.stop(t)

	private, inGroup := 0, 0
	sayPrivate := func(text string) string {
		t.Helper()
		private++
		tg.PushText(memberA, memberA, text)
		return waitSentTo(ctx, t, tg, memberA, private)[private-1].Visible
	}
	say := func(user int64, text string) string {
		t.Helper()
		inGroup++
		tg.PushGroupText(user, group, text)
		return waitSentTo(ctx, t, tg, group, inGroup)[inGroup-1].Visible
	}
	sayPrivate("CONCERN my hearing is on Friday")
	say(memberA, mention("CONCERN my hearing is on Friday"))

	if got := say(memberB, "/status"); strings.Contains(got, marker) {
		t.Errorf("B's /status in the group lists A's concern:\n%s", got)
	}
	say(memberB, mention("SEARCH"))
	for _, r := range ai.Requests() {
		if last := r.Body.Messages[len(r.Body.Messages)-1]; last.Role == openai.ChatMessageRoleTool && strings.Contains(last.Content, marker) {
			t.Errorf("B's memory search in the group found A's inner life:\n%s", last.Content)
		}
	}
	if got := say(memberA, "/status"); !strings.Contains(got, marker) {
		t.Fatalf("A's /status in the group lacks A's own concern (the test proves nothing):\n%s", got)
	}

	count := func(file string) int { return markerCount(t, file, marker) }
	backup := func(name string) string { return hotBackup(t, path, filepath.Join(dir, name)) }
	if n := count(backup("before.db")); n == 0 {
		t.Fatal("the marker is not in a backup before /forget: the test proves nothing")
	}
	sayPrivate("/forget")
	tg.PushCallback(memberA, memberA, fmt.Sprintf("/forget yes %d", memberA))
	private++
	if got := waitSentTo(ctx, t, tg, memberA, private)[private-1].Visible; !strings.HasPrefix(got, "Done.") {
		t.Fatalf("confirmation = %q", got)
	}
	// The compaction follows the confirmation.
	for count(store) != 0 {
		if ctx.Err() != nil {
			t.Fatalf("the store file still holds A's inner life (%d times) after A's /forget", count(store))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := count(backup("after.db")); n != 0 {
		t.Errorf("a backup taken after A's /forget holds A's inner life %d times", n)
	}
}
