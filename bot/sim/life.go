package sim

import (
	"encoding/json"
	"strings"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// The scripted model's part in a scenario's life (SimUser.Life): what a real model would
// do with what the person tells, deterministically — in the chat, a concern for the day
// it is about and a line of how they are; at night, the dream's self note, a line of how
// they are and a thought to share tied to what they said.

// lifeCalls are the tool calls of the chat run that answers l's message, one request each.
func lifeCalls(l SimLife) []openaitest.Reply {
	var out []openaitest.Reply
	if c := strings.TrimSpace(l.Concern); c != "" {
		args := map[string]any{"action": "open", "id": nil, "summary": c, "kind": "event", "check_in_at": nil,
			"on": nil, "note": nil}
		if l.On != "" {
			args["on"] = l.On
		}
		out = append(out, openaitest.Tool("innerlife_concern", jsonArgs(args)))
	}
	if f := strings.TrimSpace(l.Feeling); f != "" {
		out = append(out, openaitest.Tool("core_how_they_are", jsonArgs(map[string]any{"note": f, "replace": false})))
	}
	return out
}

// dreamCalls is the dream's request on day after l was told: a self note, a line of how
// they are and a share tied to what they said, mattering most the night after it was told.
func dreamCalls(l SimLife, day int) openaitest.Reply {
	about := strings.TrimSpace(l.Concern)
	if about == "" {
		about = strings.TrimSpace(l.Says)
	}
	matters := 2
	if day-l.Day <= 1 { // the night after it was told
		matters = 3
	}
	feeling := strings.TrimSpace(l.Feeling)
	if feeling == "" {
		feeling = "has " + about + " on their mind"
	}
	return openaitest.Reply{ToolCalls: []openaitest.Call{
		{Name: "innerlife_self_note", Args: jsonArgs(map[string]any{
			"note": "They told me: " + brain.ShareText(l.Says) + ". I keep wondering how " + about + " will go for them."})},
		{Name: "core_how_they_are", Args: jsonArgs(map[string]any{"note": "still thinking about " + about + "; " + feeling,
			"replace": false})},
		{Name: "innerlife_share_later", Args: jsonArgs(map[string]any{
			"text": "a small thought about " + about + ", for when I next write", "tied_to": l.Says,
			"expires_in_days": 2, "matters": matters})},
	}}
}

// jsonArgs is v as a tool call's arguments.
func jsonArgs(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings, numbers, booleans and nil always marshal
	}
	return string(b)
}
