package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

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
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return openaitest.Answer("noted", "active", 0.9)
		}
		if _, rest, ok := strings.Cut(groupLastUser(req), "STATE "); ok {
			return openaitest.Tool("core_how_they_are", fmt.Sprintf(`{"note":%q,"replace":false}`, strings.TrimSpace(rest)))
		}
		return openaitest.Answer("hello there", "active", 0.9)
	})
	ctx := testCtx(t, 90*time.Second)
	store := h.cfg.Storage.Path
	_, stop := h.start()
	defer stop()

	private, inGroup := 0, 0
	sayPrivate := func(user int64, text string) string {
		t.Helper()
		if user == groupMemberA {
			private++
		}
		tg.PushText(user, user, text)
		return groupWaitSent(ctx, t, tg, user, private)[private-1].Visible
	}
	say := func(user int64, text string) string {
		t.Helper()
		inGroup++
		tg.PushGroupText(user, groupChat, text)
		return groupWaitSent(ctx, t, tg, groupChat, inGroup)[inGroup-1].Visible
	}
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

	if got := sayPrivate(groupMemberA, "/thoughts"); !strings.Contains(got, privateWord) || strings.Contains(got, groupWord) {
		t.Errorf("A's /thoughts in private = %q, want A's private note alone", got)
	}
	if got := say(groupMemberA, "/thoughts"); !strings.Contains(got, groupWord) || strings.Contains(got, privateWord) || strings.Contains(got, keptWord) {
		t.Errorf("A's /thoughts in the group = %q, want A's group note alone", got)
	}
	if n := len(ai.Requests()); n != calls {
		t.Errorf("/thoughts cost %d model calls, want 0", n-calls)
	}

	count := func(word string) int { return markerCount(t, store, word) }
	if count(privateWord) == 0 || count(groupWord) == 0 || count(keptWord) == 0 {
		t.Fatal("a note is not in the store file before /forget: the test proves nothing")
	}
	sayPrivate(groupMemberA, "/forget")
	tg.PushCallback(groupMemberA, groupMemberA, fmt.Sprintf("/forget yes %d", groupMemberA))
	private++
	if got := groupWaitSent(ctx, t, tg, groupMemberA, private)[private-1].Visible; !strings.HasPrefix(got, "Done.") {
		t.Fatalf("confirmation = %q", got)
	}
	// The compaction follows the confirmation.
	waitUntil(t, ctx, "the store file without A's notes after A's /forget", func() bool {
		return count(privateWord) == 0 && count(groupWord) == 0
	})
	if count(keptWord) == 0 {
		t.Error("B's note went with A's /forget")
	}
	if got := say(groupMemberB, "/thoughts"); !strings.Contains(got, keptWord) {
		t.Errorf("B's /thoughts in the group after A's /forget = %q, want B's note", got)
	}
}
