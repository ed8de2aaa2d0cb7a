package innerlife

import (
	"time"

	"github.com/anima-bot/anima/brain"
)

// The dream's self note and share tools, for TestSelfTools.
var (
	SelfNoteTool   brain.Tool = selfNoteTool{}
	ShareLaterTool brain.Tool = shareLaterTool{}
)

// OpenConcernChange is the change that opens an event concern with a check-in at checkIn.
func OpenConcernChange(chat int64, id string, checkIn time.Time) brain.PluginChange {
	return change(chat, chat, openConcern{Concern: Concern{ID: id, Chat: chat, User: chat, Summary: "concern " + id, Kind: "event",
		Created: checkIn.Add(-48 * time.Hour), Touched: checkIn.Add(-48 * time.Hour), CheckInAt: checkIn}})
}

// EntryChange is the change that writes a reflection entry text at at in chat.
func EntryChange(chat int64, text string, at time.Time) brain.PluginChange {
	return change(chat, chat, writeEntry{Entry: Entry{Chat: chat, User: chat, Kind: "reflection", Text: text, At: at}})
}

// OpenChange is the change that opens c as it is (its id, days and check-in included).
func OpenChange(c Concern) brain.PluginChange { return change(c.Chat, c.User, openConcern{Concern: c}) }

// AnchorDay is anchorDay, for TestAnchorSpans.
func AnchorDay(summary string, now time.Time, loc *time.Location) (string, string) {
	return anchorDay(summary, now, loc)
}
