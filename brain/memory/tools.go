package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Tool names.
const (
	ToolRemember = "core_remember"
	ToolSearch   = "core_memory_search"
)

const maxQueryRunes = 500

// Searcher is more for core_memory_search to look in than the memory's own index: a
// plugin's records (the inner life's concerns and journal, say). It returns up to limit
// of chat's records matching query, best first; the tool lists them after the memory's
// own hits. A Searcher logs and counts its own failures (it returns what it found).
type Searcher interface {
	Search(chat, user int64, query string, limit int) []brain.Hit
}

// Tools returns memory's tools for cognition: core_remember, core_memory_search, which
// also consults more (may be empty), and core_how_they_are.
func (m *Memory) Tools(more ...Searcher) []brain.Tool {
	return []brain.Tool{rememberTool{}, searchTool{m: m, more: more}, howTheyAreTool{}}
}

var (
	_ brain.Tool = rememberTool{}
	_ brain.Tool = searchTool{}
)

type rememberTool struct{}

var rememberSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"attribute":{"type":"string","description":"What the fact is about, a short snake_case name such as name, birthday, favourite_food, sister_name."},` +
	`"value":{"type":"string","description":"The fact, in a few words. Replaces any earlier value of the attribute."}},` +
	`"required":["attribute","value"],"additionalProperties":false}`)

func (rememberTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{
		Name:        ToolRemember,
		Description: "Remember a lasting fact about the user (name, birthday, preferences, people in their life). One attribute per call; a new value replaces the old one.",
		Parameters:  rememberSchema,
		SideEffects: true,
		Profiles:    []brain.Profile{brain.ProfileChat, brain.ProfileDream},
	}
}

func (rememberTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var args struct {
		Attribute *string `json:"attribute"`
		Value     *string `json:"value"`
	}
	if err := call.Decode(&args); err != nil {
		return brain.ToolResult{}, err
	}
	if args.Attribute == nil || args.Value == nil {
		return brain.ToolResult{}, errors.New("attribute and value are required")
	}
	attr, val := NormalizeAttribute(*args.Attribute), normalizeValue(*args.Value)
	if attr == "" {
		return brain.ToolResult{}, errors.New("attribute must contain letters or digits")
	}
	if val == "" {
		return brain.ToolResult{}, errors.New("value must not be empty")
	}
	return brain.ToolResult{
		Content: "remembered " + attr,
		Intents: []brain.Intent{brain.Remember{Chat: call.Chat, User: call.User, Attribute: attr, Value: val}},
	}, nil
}

type searchTool struct {
	m    *Memory
	more []Searcher
}

var searchSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"query":{"type":"string","description":"Keywords to look for in past conversations, the summary and the facts about the user."}},` +
	`"required":["query"],"additionalProperties":false}`)

func (t searchTool) Spec() brain.ToolSpec {
	about := "Search your memory of this chat: earlier messages, the conversation summary and facts about the user."
	if len(t.more) > 0 {
		about = "Search your memory of this chat: earlier messages, the conversation summary, facts about the user, " +
			"and your own private notes (the concerns you follow, older journal entries)."
	}
	return brain.ToolSpec{
		Name:        ToolSearch,
		Description: about,
		Parameters:  searchSchema,
		Profiles:    []brain.Profile{brain.ProfileChat, brain.ProfileProactive, brain.ProfileDream},
	}
}

func (t searchTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var args struct {
		Query *string `json:"query"`
	}
	if err := call.Decode(&args); err != nil {
		return brain.ToolResult{}, err
	}
	if args.Query == nil || strings.TrimSpace(*args.Query) == "" {
		return brain.ToolResult{}, errors.New("query must not be empty")
	}
	query := brain.TruncateRunes(*args.Query, maxQueryRunes)
	hits, err := t.m.Search(call.Chat, call.User, query, defaultLimit)
	if err != nil {
		t.m.log.Error("memory search failed", "chat", call.Chat, "err", err)
		return brain.ToolResult{}, errors.New("memory search is unavailable right now")
	}
	for _, s := range t.more {
		hits = append(hits, s.Search(call.Chat, call.User, query, defaultLimit)...)
	}
	return brain.ToolResult{Content: FormatHits(hits, call.Zone)}, nil
}

// FormatHits renders hits for the model, one a line with its local date: "- 2026-01-02
// (turn) user: …". It returns "nothing found" for no hits.
func FormatHits(hits []brain.Hit, loc *time.Location) string {
	if len(hits) == 0 {
		return "nothing found"
	}
	if loc == nil {
		loc = time.UTC
	}
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteByte('\n')
		}
		date := "undated"
		if !h.At.IsZero() {
			date = h.At.In(loc).Format("2006-01-02 15:04")
		}
		fmt.Fprintf(&b, "- %s (%s) %s", date, h.Source, strings.Join(strings.Fields(truncate(h.Text, hitTextBytes)), " "))
	}
	return b.String()
}
