package schedule

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
	ToolSchedule = "core_schedule"
	ToolCancel   = "core_schedule_cancel"
)

// Tools returns the scheduler's tools for cognition: core_schedule and
// core_schedule_cancel. They return intents; the core loop applies them with Add and
// Cancel.
func (s *Scheduler) Tools() []brain.Tool {
	return []brain.Tool{scheduleTool{s: s}, cancelTool{s: s}}
}

var (
	_ brain.Tool = scheduleTool{}
	_ brain.Tool = cancelTool{}
)

type scheduleTool struct{ s *Scheduler }

var scheduleSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"note":{"type":"string","description":"What to remind the user of, or what to follow up on, in a few words."},` +
	`"delay_seconds":{"type":["integer","null"],"description":"Fire once after this many seconds (1 to 31536000)."},` +
	`"at":{"type":["string","null"],"description":"Fire once at this time: RFC 3339 with offset, or local time as 2006-01-02T15:04 in the user's zone."},` +
	`"cron":{"type":["string","null"],"description":"Fire repeatedly: a 5-field cron spec (minute hour day-of-month month day-of-week) in the user's zone, e.g. \"0 9 * * 1-5\", or @daily/@weekly. At most every 15 minutes."},` +
	`"kind":{"type":["string","null"],"enum":["reminder","followup",null],"description":"reminder (default): something the user asked to be reminded of; followup: you checking back on something yourself."},` +
	`"reason":{"type":["string","null"],"description":"Why this was scheduled: the conversation context you will need when it fires."}},` +
	`"required":["note","delay_seconds","at","cron","kind","reason"],"additionalProperties":false}`)

func (scheduleTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{
		Name: ToolSchedule,
		Description: "Schedule a reminder or a follow-up in this chat. Give exactly one of delay_seconds, at or cron; " +
			"the others null. The answer carries the id (for core_schedule_cancel) and the due time in the user's zone.",
		Parameters:  scheduleSchema,
		SideEffects: true,
		Profiles:    []brain.Profile{brain.ProfileChat, brain.ProfileProactive},
	}
}

type scheduleArgs struct {
	Note         *string `json:"note"`
	DelaySeconds *int64  `json:"delay_seconds"`
	At           *string `json:"at"`
	Cron         *string `json:"cron"`
	Kind         *string `json:"kind"`
	Reason       *string `json:"reason"`
}

func (t scheduleTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var a scheduleArgs
	if err := call.Decode(&a); err != nil {
		return brain.ToolResult{}, err
	}
	if a.Note == nil {
		return brain.ToolResult{}, errors.New("note is required")
	}
	kind := brain.KindReminder
	if a.Kind != nil {
		switch k := brain.MessageKind(strings.TrimSpace(*a.Kind)); k {
		case brain.KindReminder, brain.KindFollowup:
			kind = k
		case "":
		default:
			return brain.ToolResult{}, fmt.Errorf("kind must be reminder, followup or null, got %q", *a.Kind)
		}
	}
	loc := call.Zone
	if loc == nil {
		loc = t.s.zone
	}
	if err := t.s.admit(call); err != nil {
		return brain.ToolResult{}, err
	}
	item, err := t.s.Plan(PlanArgs{
		Chat: call.Chat, User: call.User, Note: *a.Note, Reason: deref(a.Reason),
		DelaySeconds: a.DelaySeconds, At: a.At, Cron: a.Cron, Now: call.Now, Zone: loc,
	})
	if err != nil {
		return brain.ToolResult{}, err
	}
	item.Kind = kind
	return brain.ToolResult{
		Content: describe(item, loc, call.Now),
		Intents: []brain.Intent{brain.Schedule{Item: item}},
	}, nil
}

// admit refuses a new item beyond the per-run or the per-chat cap, saying why (the
// model reads it and can tell the user).
func (s *Scheduler) admit(call brain.ToolCall) error {
	earlier := 0
	for _, in := range call.Earlier {
		if sc, ok := in.(brain.Schedule); ok && sc.Item.Chat == call.Chat {
			earlier++
		}
	}
	if s.maxPerRun > 0 && earlier >= s.maxPerRun {
		s.refusals.Refused(brain.LimitRemindersPerRun)
		return fmt.Errorf("not scheduled: at most %d new reminders per turn, and %d are already set in this one; "+
			"tell the user which ones you set and that they can ask for the rest later", s.maxPerRun, earlier)
	}
	if s.maxPending <= 0 {
		return nil
	}
	n, err := s.Pending(call.Chat)
	if err != nil {
		s.log.Error("counting schedules failed", "chat", call.Chat, "err", err)
		return errors.New("schedules are unavailable right now")
	}
	if n+earlier >= s.maxPending {
		s.refusals.Refused(brain.LimitPendingReminders)
		return fmt.Errorf("not scheduled: this chat already has %d pending reminders, the most it may have; "+
			"tell the user to cancel some (/reminders lists them, /cancel ID removes one)", s.maxPending)
	}
	return nil
}

// describe is the tool's answer: "scheduled r7k2q9 for Tue 3 Nov 15:04 CET (in 2h)".
func describe(it brain.ScheduleItem, loc *time.Location, now time.Time) string {
	what := "scheduled"
	if it.Kind == brain.KindFollowup {
		what = "scheduled follow-up"
	}
	if it.Cron != "" {
		return fmt.Sprintf("%s %s: %s (%s), next %s (%s)", what, it.ID, it.Cron, it.Zone, localTime(it.Due, loc), Until(now, it.Due))
	}
	return fmt.Sprintf("%s %s for %s (%s)", what, it.ID, localTime(it.Due, loc), Until(now, it.Due))
}

type cancelTool struct{ s *Scheduler }

var cancelSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"id":{"type":"string","description":"The id core_schedule answered with, as listed by /reminders."}},` +
	`"required":["id"],"additionalProperties":false}`)

func (cancelTool) Spec() brain.ToolSpec {
	return brain.ToolSpec{
		Name:        ToolCancel,
		Description: "Cancel a scheduled reminder or follow-up of this chat by its id.",
		Parameters:  cancelSchema,
		SideEffects: true,
		Profiles:    []brain.Profile{brain.ProfileChat, brain.ProfileProactive},
	}
}

func (t cancelTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var a struct {
		ID *string `json:"id"`
	}
	if err := call.Decode(&a); err != nil {
		return brain.ToolResult{}, err
	}
	if a.ID == nil || strings.TrimSpace(*a.ID) == "" {
		return brain.ToolResult{}, errors.New("id is required")
	}
	id := strings.ToLower(strings.TrimSpace(*a.ID))
	items, err := t.s.List(call.Chat)
	if err != nil {
		t.s.log.Error("listing schedules failed", "chat", call.Chat, "err", err)
		return brain.ToolResult{}, errors.New("schedules are unavailable right now")
	}
	if call.User != 0 && call.User != call.Chat {
		// In a group a run acts for its sender: only their items can be cancelled.
		own := items[:0]
		for _, it := range items {
			if it.User == call.User {
				own = append(own, it)
			}
		}
		items = own
	}
	for _, it := range items {
		if it.ID == id {
			return brain.ToolResult{
				Content: fmt.Sprintf("cancelled %s (%s)", id, it.Note),
				Intents: []brain.Intent{brain.CancelSchedule{Chat: call.Chat, ID: id}},
			}, nil
		}
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	if len(ids) == 0 {
		return brain.ToolResult{}, fmt.Errorf("no scheduled item %q: this chat has none", id)
	}
	return brain.ToolResult{}, fmt.Errorf("no scheduled item %q; this chat's ids are %s", id, strings.Join(ids, ", "))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
