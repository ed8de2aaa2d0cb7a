package cognition_test

import (
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// TestDreamPromptSaysOpen (issue 17 item 3): the dream's closing instruction asks the
// model to open the concerns the day implied that no run opened, not only to touch or
// close them, and to fold the old journal entries it is shown.
func TestDreamPromptSaysOpen(t *testing.T) {
	e := newEnv(t, setup{})
	e.srv.Enqueue(openaitest.Answer("", "idle", 0.9))
	w := proactiveWake()
	w.Profile = brain.ProfileDream
	w.Reason = brain.Reason{Code: "dream", Text: "the night's reflection"}
	think(t, e, w)
	msgs := e.srv.Requests()[0].Body.Messages
	last := msgs[len(msgs)-1].Content
	braintest.CheckText(t, "the dream's instruction", last, []string{"open concerns for what the day's conversation implied", "touch or close", "fold"}, nil)
}
