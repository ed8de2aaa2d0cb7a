package innerlife

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
)

// The dream's tools for something of anima's own (brain/self.go): the self note it keeps
// per relationship and the thoughts it might share when it writes first. Their intents go
// to the core loop, which owns the relationship (bot's pluginHost.Commit hands them over).

var dreamOnly = []brain.Profile{brain.ProfileDream}

// dreamSpec is the spec of a tool offered to the dream alone, whose calls have side effects.
func dreamSpec(name, description string, params json.RawMessage) brain.ToolSpec {
	return brain.ToolSpec{Name: name, Description: description, Parameters: params, SideEffects: true, Profiles: dreamOnly}
}

// selfNoteTool is innerlife_self_note: the dream rewrites anima's own note.
type selfNoteTool struct{}

var selfNoteSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"note":{"type":"string","description":"the whole note, at most 1000 characters; it replaces the one you have"}},` +
	`"required":["note"],"additionalProperties":false}`)

func (selfNoteTool) Spec() brain.ToolSpec {
	return dreamSpec("innerlife_self_note", "Nightly reflection only: rewrite your own note "+
		"about this relationship — what you have been thinking about, opinions you formed, running jokes with "+
		"this person — in your own voice, at most 1000 characters. Not a digest of their day: that is the "+
		"journal's. Keep what still matters from the note you have.", selfNoteSchema)
}

// errGroupSelf is a self tool's answer in a group, which has no dream and keeps no self
// note or share: whatever a member wrote would become anima's own words about another.
var errGroupSelf = errors.New("a group has no self note and no thoughts to share; these tools are for the nightly reflection of a private chat")

// inGroup reports whether call is a group's (a private chat's id is its person's).
func inGroup(call brain.ToolCall) bool { return call.User != 0 && call.Chat != call.User }

func (selfNoteTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	if inGroup(call) {
		return brain.ToolResult{}, errGroupSelf
	}
	var a struct {
		Note string `json:"note"`
	}
	if err := call.Decode(&a); err != nil {
		return brain.ToolResult{}, err
	}
	// Measured before SelfNote's cut: the model shortens its own note, nothing is lost unseen.
	switch n := utf8.RuneCountInString(strings.Join(strings.Fields(a.Note), " ")); {
	case n == 0:
		return brain.ToolResult{}, errors.New("note is empty")
	case n > brain.SelfNoteMax:
		return brain.ToolResult{}, fmt.Errorf("the note is %d characters; at most %d: shorten it and call again", n, brain.SelfNoteMax)
	}
	return brain.ToolResult{Content: "noted",
		Intents: []brain.Intent{brain.SetSelfNote{Chat: call.Chat, Note: brain.CleanSelfNote(a.Note)}}}, nil
}

// shareLaterTool is innerlife_share_later: the dream leaves a thought to share.
type shareLaterTool struct{}

var shareLaterSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"text":{"type":"string","description":"the thought, one line, at most 300 characters"},` +
	`"tied_to":{"type":"string","description":"what it is tied to: something they said, or one of your interests"},` +
	`"expires_in_days":{"type":"integer","minimum":1,"maximum":7,"description":"after how many days it is stale"},` +
	`"matters":{"type":"integer","minimum":1,"maximum":3,"description":"how much it matters to them now: 1 a passing thought, 2 tied to something they care about, 3 tied to what is on their plate now"}},` +
	`"required":["text","tied_to","expires_in_days","matters"],"additionalProperties":false}`)

func (shareLaterTool) Spec() brain.ToolSpec {
	return dreamSpec("innerlife_share_later", "Nightly reflection only: keep a thought you "+
		"might share with them when you next write first or they come back (0 to 3 a night) — tied to something they said or to one "+
		"of your interests, the way a friend saves something to tell — with how much it matters to them now. It makes "+
		"you want to write; it is dropped once said or when it expires.", shareLaterSchema)
}

func (shareLaterTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	if inGroup(call) {
		return brain.ToolResult{}, errGroupSelf
	}
	var a struct {
		Text    string `json:"text"`
		TiedTo  string `json:"tied_to"`
		Expires int    `json:"expires_in_days"`
		Matters *int   `json:"matters"`
	}
	if err := call.Decode(&a); err != nil {
		return brain.ToolResult{}, err
	}
	matters := 1 // a client that leaves it out (the schema asks for it) keeps a passing thought
	if a.Matters != nil {
		matters = *a.Matters
	}
	text, tied := strings.Join(strings.Fields(a.Text), " "), strings.Join(strings.Fields(a.TiedTo), " ")
	switch {
	case text == "":
		return brain.ToolResult{}, errors.New("text is empty")
	case utf8.RuneCountInString(text) > brain.ShareTextMax:
		return brain.ToolResult{}, fmt.Errorf("text is %d characters; at most %d", utf8.RuneCountInString(text), brain.ShareTextMax)
	case a.Expires < 1 || a.Expires > brain.ShareMaxDays:
		return brain.ToolResult{}, fmt.Errorf("expires_in_days %d: want 1 to %d", a.Expires, brain.ShareMaxDays)
	case matters < 1 || matters > brain.ShareMattersMax:
		return brain.ToolResult{}, fmt.Errorf("matters %d: want 1 to %d", matters, brain.ShareMattersMax)
	case shared(call.Earlier) >= brain.MaxShares:
		return brain.ToolResult{}, fmt.Errorf("%d thoughts to share already kept tonight; that is the most", brain.MaxShares)
	}
	s := brain.Share{ID: newID(), Text: text, TiedTo: brain.ShareText(tied), At: call.Now, Matters: matters,
		Expires: call.Now.Add(time.Duration(a.Expires) * 24 * time.Hour)}
	return brain.ToolResult{Content: fmt.Sprintf("kept until %s", s.Expires.In(zoneOr(call.Zone)).Format("Mon Jan 2")),
		Intents: []brain.Intent{brain.ShareLater{Chat: call.Chat, Share: s}}}, nil
}

// shared counts the shares among a run's earlier intents.
func shared(earlier []brain.Intent) int {
	n := 0
	for _, in := range earlier {
		if _, ok := in.(brain.ShareLater); ok {
			n++
		}
	}
	return n
}
