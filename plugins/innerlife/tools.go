package innerlife

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
)

var allProfiles = []brain.Profile{brain.ProfileChat, brain.ProfileProactive, brain.ProfileDream}

// concernTool is innerlife_concern: open, touch or close a concern.
type concernTool struct{ p *Plugin }

var concernSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["open","touch","close"]},` +
	`"id":{"type":["string","null"],"description":"the concern's id (touch, close)"},` +
	`"summary":{"type":["string","null"],"description":"what the user cares about, one short line (open)"},` +
	`"kind":{"type":["string","null"],"enum":["project","interest","event","wellbeing","conversation",null]},` +
	`"check_in_at":{"type":["string","null"],"description":"when to ask how it went: RFC 3339, or local YYYY-MM-DDTHH:MM in the user's zone"},` +
	`"on":{"type":["string","null"],"description":"the day it is about, for an event (open): YYYY-MM-DD in the user's zone, or today, tomorrow, a weekday name"},` +
	`"note":{"type":["string","null"],"description":"news about it (touch)"}},` +
	`"required":["action","id","summary","kind","check_in_at","on","note"],"additionalProperties":false}`)

func (concernTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{Name: "innerlife_concern", Description: "Keep track of something the user cares about " +
		"(a project, an interest, an upcoming event, how they are, an open conversation). open needs summary and kind " +
		"(a summary without relative days such as \"tomorrow\": give an event's day in on) " +
		"and returns the id; touch records news and makes it current again; close ends it. check_in_at is when you " +
		"mean to ask how it went: you will be reminded then, and may ask if it is a good moment. In your nightly " +
		"reflection, also open those the day's conversation implied that no concern follows yet.",
		Parameters: concernSchema, SideEffects: true, Profiles: allProfiles}
}

type concernArgs struct {
	Action    string  `json:"action"`
	ID        *string `json:"id"`
	Summary   *string `json:"summary"`
	Kind      *string `json:"kind"`
	CheckInAt *string `json:"check_in_at"`
	On        *string `json:"on"`
	Note      *string `json:"note"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.Join(strings.Fields(*p), " ")
}

// parseCheckIn reads an RFC 3339 time, or a local "YYYY-MM-DDTHH:MM" in zone.
func parseCheckIn(s string, zone *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if zone == nil {
		zone = time.UTC
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04", s, zone); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("check_in_at %q: want RFC 3339 (2025-06-01T18:00:00+02:00) or local YYYY-MM-DDTHH:MM", s)
}

func (t concernTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var a concernArgs
	if err := call.Decode(&a); err != nil {
		return brain.ToolResult{}, err
	}
	var checkIn time.Time
	if s := str(a.CheckInAt); s != "" {
		var err error
		if checkIn, err = parseCheckIn(s, call.Zone); err != nil {
			return brain.ToolResult{}, err
		}
	}
	// In a group the concern is the speaker's: it is kept for them, shown to them alone.
	s := subjectOf(call.Chat, call.User)
	switch a.Action {
	case "open":
		summary, kind := brain.TruncateRunes(str(a.Summary), 200), str(a.Kind)
		if summary == "" || !slices.Contains(concernKinds, kind) {
			return brain.ToolResult{}, fmt.Errorf("open needs a summary and a kind (%s)", strings.Join(concernKinds, ", "))
		}
		if err := t.p.mayOpen(s, call); err != nil {
			return brain.ToolResult{}, err
		}
		// Dates anchored as the person said them: "tomorrow" is a day, not a word that
		// stays "tomorrow" in every later prompt.
		summary, on := anchorDay(summary, call.Now, call.Zone)
		if o := str(a.On); o != "" {
			d, ok := parseDay(o, call.Now, call.Zone)
			if !ok {
				return brain.ToolResult{}, fmt.Errorf("on %q: want YYYY-MM-DD, today, tomorrow or a weekday name", o)
			}
			on = d
		}
		c := Concern{ID: newID(), Chat: s.chat, User: s.user, Summary: summary, Kind: kind, Created: call.Now, Touched: call.Now,
			CheckInAt: checkIn, On: on}
		if n := str(a.Note); n != "" {
			c.Notes = []string{brain.TruncateRunes(n, 200)}
		}
		res := "opened concern " + c.ID
		if !checkIn.IsZero() {
			res += "; check-in at " + checkIn.In(zoneOr(call.Zone)).Format("Mon 2 Jan 15:04")
		}
		return brain.ToolResult{Content: res, Intents: []brain.Intent{change(s.chat, s.user, openConcern{Concern: c})}}, nil
	case "touch", "close":
		id := str(a.ID)
		if !t.p.hasConcern(s, id) {
			return brain.ToolResult{}, fmt.Errorf("no open concern %q of this user in this chat", id)
		}
		if a.Action == "close" {
			return brain.ToolResult{Content: "closed concern " + id, Intents: []brain.Intent{change(s.chat, s.user, closeConcern{ID: id})}}, nil
		}
		return brain.ToolResult{Content: "touched concern " + id, Intents: []brain.Intent{change(s.chat, s.user,
			touchConcern{ID: id, Note: brain.TruncateRunes(str(a.Note), 200), CheckInAt: checkIn})}}, nil
	}
	return brain.ToolResult{}, errors.New(`action must be "open", "touch" or "close"`)
}

func zoneOr(z *time.Location) *time.Location {
	if z == nil {
		return time.UTC
	}
	return z
}

func newID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (p *Plugin) hasConcern(s subject, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.byID[id]
	return ok && c.subject() == s
}

// mayOpen says why s may not open one more concern in call's run, if it may not: the run
// opened MaxOpenedPerRun already, or s has MaxOpenConcerns that are not dormant (counting
// those the run opened).
func (p *Plugin) mayOpen(s subject, call brain.ToolCall) error {
	opened := 0
	for _, in := range call.Earlier {
		if c, ok := in.(brain.PluginChange); ok && c.Plugin == Name {
			if _, ok := c.Change.(openConcern); ok {
				opened++
			}
		}
	}
	if opened >= MaxOpenedPerRun {
		return fmt.Errorf("not opened: at most %d concerns may be opened in one run; touch an open one instead", MaxOpenedPerRun)
	}
	p.mu.Lock()
	n := p.openCount(s, call.Now)
	p.mu.Unlock()
	if n+opened >= MaxOpenConcerns {
		return fmt.Errorf("not opened: you already follow %d concerns of this user, the most allowed; close one that "+
			"is settled (or touch a related one) first", MaxOpenConcerns)
	}
	return nil
}

// journalTool is innerlife_journal: a private journal entry.
type journalTool struct{ p *Plugin }

var journalSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"kind":{"type":"string","enum":["observation","reflection","realization","intention","question","memory","gratitude","frustration"]},` +
	`"text":{"type":"string","description":"one to three sentences, at most 400 characters"}},` +
	`"required":["kind","text"],"additionalProperties":false}`)

func (journalTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{Name: "innerlife_journal", Description: "Write a private entry in your own journal: one to " +
		"three sentences (at most 400 characters) about what you noticed, felt or mean to do. The user never sees it " +
		"unless they ask what you have been thinking about. At most one entry per 5 minutes, and a few a day.",
		Parameters: journalSchema, SideEffects: true, Profiles: allProfiles}
}

func (t journalTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var a struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	}
	if err := call.Decode(&a); err != nil {
		return brain.ToolResult{}, err
	}
	text := strings.Join(strings.Fields(a.Text), " ")
	switch {
	case !slices.Contains(entryKinds, a.Kind):
		return brain.ToolResult{}, fmt.Errorf("kind must be one of %s", strings.Join(entryKinds, ", "))
	case text == "":
		return brain.ToolResult{}, errors.New("text is empty")
	case utf8.RuneCountInString(text) > MaxEntryChars:
		return brain.ToolResult{}, fmt.Errorf("text is %d characters; at most %d", utf8.RuneCountInString(text), MaxEntryChars)
	}
	s := subjectOf(call.Chat, call.User)
	if err := t.p.reserveEntry(s, call.Now); err != nil {
		return brain.ToolResult{}, err
	}
	e := Entry{Chat: s.chat, User: s.user, Kind: a.Kind, Text: text, At: call.Now}
	return brain.ToolResult{Content: "written in your journal", Intents: []brain.Intent{change(s.chat, s.user, writeEntry{Entry: e})}}, nil
}

// reserveEntry claims s's journal slot for the run now going on, or says why not: an
// entry was committed less than JournalEvery before now, this run already wrote one, or
// the JournalWindow's entries are written. The slot is taken for good only when the run's
// turn commits (Apply); a run that fails leaves it free, since the next run of the chat
// starts afresh (Context clears the claim).
func (p *Plugin) reserveEntry(s subject, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if last, ok := p.lastOpen[s]; (ok && now.Sub(last) < JournalEvery) || p.claimed[s] {
		return errors.New("you already wrote in your journal in the last 5 minutes; not written")
	}
	if p.writtenSince(s, now) >= p.cfg.JournalPerDay {
		return fmt.Errorf("you already wrote %d journal entries about this user in the last 24 hours, the most allowed; not written",
			p.cfg.JournalPerDay)
	}
	p.claimed[s] = true
	return nil
}
