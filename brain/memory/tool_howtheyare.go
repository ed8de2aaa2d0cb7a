package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anima-bot/anima/brain"
)

// ToolHowTheyAre is the tool that notes how the person is (brain.NoteState).
const ToolHowTheyAre = "core_how_they_are"

var _ brain.Tool = howTheyAreTool{}

// howTheyAreTool keeps the note of how the person of the run is: chat runs add what they
// tell, the dream refreshes it.
type howTheyAreTool struct{}

var howTheyAreSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"note":{"type":"string","description":"How they are now and what is on their plate, in one short line in your words, such as: exhausted, big deadline Friday. At most 200 characters."},` +
	`"replace":{"type":"boolean","description":"true when the earlier lines no longer hold: the note becomes this line alone. false adds the line to the note."}},` +
	`"required":["note","replace"],"additionalProperties":false}`)

func (howTheyAreTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{
		Name: ToolHowTheyAre,
		Description: fmt.Sprintf("Note how the person is — their mood, energy, what is on their plate — when it shows or changes "+
			"(in a group: the member who wrote). The note keeps its last %d lines, each dated, for %d days; you see it in later conversations.",
			brain.StateLines, int(brain.StateFades.Hours()/24)),
		Parameters:  howTheyAreSchema,
		SideEffects: true,
		Profiles:    []brain.Profile{brain.ProfileChat, brain.ProfileDream},
	}
}

func (howTheyAreTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var args struct {
		Note    *string `json:"note"`
		Replace *bool   `json:"replace"`
	}
	if err := call.Decode(&args); err != nil {
		return brain.ToolResult{}, err
	}
	if args.Note == nil || args.Replace == nil {
		return brain.ToolResult{}, errors.New("note and replace are required")
	}
	note := brain.CleanStateLine(*args.Note)
	if note == "" {
		return brain.ToolResult{}, errors.New("note must not be empty")
	}
	if call.User == 0 {
		return brain.ToolResult{}, errors.New("there is no one person here to note this about")
	}
	done := "noted"
	if *args.Replace {
		done = "noted; the earlier lines are gone"
	}
	return brain.ToolResult{
		Content: done,
		Intents: []brain.Intent{brain.NoteState{Chat: call.Chat, User: call.User, Text: note, Replace: *args.Replace}},
	}, nil
}
