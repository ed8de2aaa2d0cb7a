package schedule_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

// Most tests here need only the store's transactions, and run on storagetest's
// memory-only store; those that need a bbolt file (a reopen, the real transactions) are at
// the end, from TestOneShotDelayFiresOnceOnTime on.

func berlin(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	return loc
}

func ptr[T any](v T) *T { return &v }

var now0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func mustPlan(t *testing.T, s *schedule.Scheduler, delay *int64, at, spec *string, now time.Time, loc *time.Location) brain.ScheduleItem {
	t.Helper()
	item, err := s.Plan(schedule.PlanArgs{Chat: 7, User: 70, Note: "drink water", Reason: "user asked", DelaySeconds: delay, At: at, Cron: spec, Now: now, Zone: loc})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if err := s.Add(item); err != nil {
		t.Fatalf("add: %v", err)
	}
	return item
}

// inboxStore is a schedule.Store whose inbox a test can read.
type inboxStore[T schedule.Tx] interface {
	schedule.Store[T]
	Pending() ([]brain.Signal, error)
}

// onBothStores runs a test on the bbolt store (in t's temporary directory) and on the
// in-memory one (storagetest.New), as subtests named bbolt and memory.
func onBothStores(t *testing.T, bbolt func(*testing.T, inboxStore[*storage.Tx]), memory func(*testing.T, inboxStore[*storagetest.Tx])) {
	t.Helper()
	t.Run("bbolt", func(t *testing.T) { bbolt(t, storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))) })
	t.Run("memory", func(t *testing.T) { memory(t, storagetest.New()) })
}

func oneShotDelayFiresOnceOnTime[T schedule.Tx](t *testing.T, st inboxStore[T]) {
	reg := prometheus.NewRegistry()
	s := schedule.New(st, schedule.Options{Registerer: reg})
	item := mustPlan(t, s, ptr[int64](3600), nil, nil, now0, time.UTC)
	if !item.Due.Equal(now0.Add(time.Hour)) || item.Kind != brain.KindReminder || len(item.ID) != 6 {
		t.Fatalf("item = %+v", item)
	}
	if got := testutil.ToFloat64(s.MetricsPending()); got != 1 {
		t.Errorf("pending = %v, want 1", got)
	}

	if sigs, err := s.FireDue(now0.Add(59 * time.Minute)); err != nil || len(sigs) != 0 {
		t.Fatalf("early FireDue = %+v, %v", sigs, err)
	}
	at := now0.Add(time.Hour)
	sigs, err := s.FireDue(at)
	if err != nil || len(sigs) != 1 {
		t.Fatalf("FireDue = %+v, %v", sigs, err)
	}
	want := brain.Signal{ID: sigs[0].ID, Type: brain.SignalScheduleDue, Source: "scheduler", Chat: 7, User: 70,
		Text: "drink water", Detail: "user asked", Kind: brain.KindReminder, Ref: item.ID, Due: item.Due, At: at}
	if sigs[0] != want || sigs[0].ID == 0 {
		t.Errorf("signal = %+v\nwant %+v", sigs[0], want)
	}
	if sigs, err := s.FireDue(at); err != nil || len(sigs) != 0 {
		t.Errorf("second FireDue at the same time = %+v, %v", sigs, err)
	}
	if sigs, _ := s.FireDue(at.Add(time.Hour)); len(sigs) != 0 {
		t.Errorf("later FireDue = %+v", sigs)
	}
	pending, err := st.Pending()
	if err != nil || len(pending) != 1 || pending[0] != want {
		t.Errorf("inbox = %+v, %v", pending, err)
	}
	if items, _ := s.List(7); len(items) != 0 {
		t.Errorf("one-shot item left: %+v", items)
	}
	if got := testutil.ToFloat64(s.MetricsFired("reminder")); got != 1 {
		t.Errorf("fired_total = %v, want 1", got)
	}
	if got := testutil.ToFloat64(s.MetricsPending()); got != 0 {
		t.Errorf("pending = %v, want 0", got)
	}
	// Replaying the Schedule intent of an item that already fired does not re-arm it.
	if err := s.Add(item); err != nil {
		t.Fatal(err)
	}
	if sigs, _ := s.FireDue(at.Add(2 * time.Hour)); len(sigs) != 0 {
		t.Errorf("replayed item fired again: %+v", sigs)
	}
}

func TestPlanAt(t *testing.T) {
	t.Parallel()
	s := schedule.New(storagetest.New(), schedule.Options{})
	loc := berlin(t)
	for _, tc := range []struct {
		name, at string
		want     time.Time
		err      string
	}{
		{"local in user zone", "2026-03-02T15:04", time.Date(2026, 3, 2, 15, 4, 0, 0, loc), ""},
		{"local with space", "2026-03-02 15:04", time.Date(2026, 3, 2, 15, 4, 0, 0, loc), ""},
		{"rfc3339", "2026-03-02T12:00:00Z", time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), ""},
		{"rfc3339 offset", "2026-03-05T09:30:00+05:30", time.Date(2026, 3, 5, 4, 0, 0, 0, time.UTC), ""},
		{"30s ago means now", "2026-03-02T09:59:30Z", now0, ""},
		{"past", "2026-03-02T09:58:00Z", time.Time{}, "in the past"},
		{"too far", "2027-06-01T10:00:00Z", time.Time{}, "more than a year"},
		{"garbage", "tomorrow at nine", time.Time{}, "not a time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item, err := s.Plan(schedule.PlanArgs{Chat: 1, User: 1, Note: "call mum", At: &tc.at, Now: now0, Zone: loc})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, schedule.ErrInvalid) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !item.Due.Equal(tc.want) {
				t.Errorf("due = %v, want %v", item.Due, tc.want)
			}
		})
	}

	// An absolute item fires at its time.
	st := storagetest.New()
	s = schedule.New(st, schedule.Options{})
	item := mustPlan(t, s, nil, ptr("2026-03-02T15:04"), nil, now0, loc)
	if sigs, _ := s.FireDue(item.Due.Add(-time.Second)); len(sigs) != 0 {
		t.Fatalf("fired a second early: %+v", sigs)
	}
	if sigs, _ := s.FireDue(item.Due); len(sigs) != 1 {
		t.Fatalf("did not fire on time: %+v", sigs)
	}
}

func TestPlanRejects(t *testing.T) {
	t.Parallel()
	s := schedule.New(storagetest.New(), schedule.Options{})
	for _, tc := range []struct {
		name  string
		note  string
		delay *int64
		at    *string
		cron  *string
		err   string
	}{
		{"none", "x", nil, nil, nil, "exactly one"},
		{"two", "x", ptr[int64](60), ptr("2026-03-02T15:04"), nil, "exactly one"},
		{"empty strings are absent", "x", nil, ptr(""), ptr(" "), "exactly one"},
		{"no note", "  ", ptr[int64](60), nil, nil, "note"},
		{"zero delay", "x", ptr[int64](0), nil, nil, "between 1 and"},
		{"negative delay", "x", ptr[int64](-5), nil, nil, "between 1 and"},
		{"delay over a year", "x", ptr[int64](366 * 24 * 3600), nil, nil, "between 1 and"},
		{"cron too often", "x", nil, nil, ptr("* * * * *"), "more often"},
		{"cron burst", "x", nil, nil, ptr("0,5 9 * * *"), "more often"},
		{"cron every minute", "x", nil, nil, ptr("@every 1m"), "more often"},
		{"cron never", "x", nil, nil, ptr("0 0 30 2 *"), "never fires"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Plan(schedule.PlanArgs{Chat: 1, User: 1, Note: tc.note, DelaySeconds: tc.delay, At: tc.at, Cron: tc.cron, Now: now0, Zone: time.UTC})
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, schedule.ErrInvalid) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
	t.Run("cron in an unnamed zone", func(t *testing.T) {
		_, err := s.Plan(schedule.PlanArgs{Chat: 1, User: 1, Note: "x", Cron: ptr("0 9 * * *"), Now: now0, Zone: time.FixedZone("UTC+3", 3*3600)})
		if err == nil || !strings.Contains(err.Error(), "named zone") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("nil zone is the default zone", func(t *testing.T) {
		s := schedule.New(storagetest.New(), schedule.Options{DefaultZone: berlin(t)})
		item, err := s.Plan(schedule.PlanArgs{Chat: 1, User: 1, Note: "x", Cron: ptr("0 9 * * *"), Now: now0, Zone: nil})
		if err != nil || item.Zone != "Europe/Berlin" || item.Due.In(berlin(t)).Hour() != 9 {
			t.Fatalf("item = %+v, %v", item, err)
		}
	})
}

func TestParseCron(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"0 9 * * *", true},
		{"30 18 * * 1-5", true},
		{"@daily", true},
		{"@weekly", true},
		{"TZ=0", false},
		{"tz=Europe/Berlin 0 9 * * *", false},
		{"CRON_TZ=x * * * * *", false},
		{"CRON_TZ=Europe/Berlin 0 9 * * *", false},
		{"61 * * * *", false},
		{"", false},
		{"   ", false},
		{"0 9 * *", false},
		{"0 0 9 * * *", false},
		{"@fortnightly", false},
		{"@every", false},
		{"*/0 * * * *", false},
		{strings.Repeat("1,", 200) + "1 * * * *", false},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := schedule.ParseCron(tc.spec)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, schedule.ErrInvalid) {
				t.Errorf("err %v does not wrap ErrInvalid", err)
			}
		})
	}
}

// TestCronAcrossDST fires "0 9 * * *" in Berlin across both 2026 DST changes (29 March,
// 25 October): always 09:00 local, whatever the UTC offset.
func TestCronAcrossDST(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	for _, tc := range []struct {
		name  string
		start time.Time
		utc   []int // UTC hour of each firing
	}{
		{"spring", time.Date(2026, 3, 27, 12, 0, 0, 0, loc), []int{8, 7, 7, 7}},
		{"autumn", time.Date(2026, 10, 23, 12, 0, 0, 0, loc), []int{7, 8, 8, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storagetest.New()
			s := schedule.New(st, schedule.Options{})
			item := mustPlan(t, s, nil, nil, ptr("0 9 * * *"), tc.start, loc)
			if item.Zone != "Europe/Berlin" || item.Cron != "0 9 * * *" {
				t.Fatalf("item = %+v", item)
			}
			due := item.Due
			for i, hour := range tc.utc {
				if sigs, _ := s.FireDue(due.Add(-time.Second)); len(sigs) != 0 {
					t.Fatalf("firing %d: fired early at %v", i, due.Add(-time.Second))
				}
				sigs, err := s.FireDue(due)
				if err != nil || len(sigs) != 1 {
					t.Fatalf("firing %d at %v: %+v, %v", i, due, sigs, err)
				}
				local := sigs[0].Due.In(loc)
				if local.Hour() != 9 || local.Minute() != 0 || sigs[0].Due.UTC().Hour() != hour {
					t.Errorf("firing %d due %v (UTC %v), want 09:00 local, %02d:00 UTC", i, local, sigs[0].Due.UTC(), hour)
				}
				items, _ := s.List(7)
				if len(items) != 1 || !items[0].Due.After(due) {
					t.Fatalf("after firing %d: items = %+v", i, items)
				}
				due = items[0].Due
			}
		})
	}
}

func TestMissedWhileDownFiresOnce(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	st := storagetest.New()
	s := schedule.New(st, schedule.Options{})
	once := mustPlan(t, s, ptr[int64](3600), nil, nil, now0, loc)
	daily := mustPlan(t, s, nil, nil, ptr("0 9 * * *"), now0, loc)

	// Down for three days: a new process finds the store as it was.
	back := now0.Add(72*time.Hour + 30*time.Minute)
	s = schedule.New(st, schedule.Options{})
	sigs, err := s.FireDue(back)
	if err != nil || len(sigs) != 2 {
		t.Fatalf("FireDue after downtime = %+v, %v", sigs, err)
	}
	byRef := map[string]brain.Signal{sigs[0].Ref: sigs[0], sigs[1].Ref: sigs[1]}
	if sig := byRef[once.ID]; !sig.Due.Equal(once.Due) || sig.At.Sub(sig.Due) != 71*time.Hour+30*time.Minute {
		t.Errorf("one-shot signal due %v at %v: lateness not shown", sig.Due, sig.At)
	}
	if sig := byRef[daily.ID]; !sig.Due.Equal(daily.Due) || !sig.At.Equal(back) {
		t.Errorf("daily signal due %v at %v, want due %v", sig.Due, sig.At, daily.Due)
	}
	items, _ := s.List(7)
	if len(items) != 1 || items[0].ID != daily.ID || !items[0].Due.After(back) || items[0].Due.Sub(back) > 24*time.Hour {
		t.Fatalf("items = %+v; want the daily one, next after %v", items, back)
	}
	if sigs, _ := s.FireDue(back); len(sigs) != 0 {
		t.Errorf("fired again: %+v", sigs)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	s := schedule.New(st, schedule.Options{})
	a := mustPlan(t, s, ptr[int64](60), nil, nil, now0, time.UTC)
	b := mustPlan(t, s, ptr[int64](120), nil, nil, now0, time.UTC)
	if ok, err := s.Cancel(8, a.ID); err != nil || ok {
		t.Fatalf("cancel from another chat = %v, %v", ok, err)
	}
	if ok, err := s.Cancel(7, a.ID); err != nil || !ok {
		t.Fatalf("cancel = %v, %v", ok, err)
	}
	if ok, _ := s.Cancel(7, a.ID); ok {
		t.Error("second cancel found it")
	}
	if ok, _ := s.Cancel(7, "../../"); ok {
		t.Error("bad id found")
	}
	sigs, _ := s.FireDue(now0.Add(time.Hour))
	if len(sigs) != 1 || sigs[0].Ref != b.ID {
		t.Errorf("fired %+v, want only %s", sigs, b.ID)
	}
}

func TestFireDueIdleDoesNotAllocate(t *testing.T) {
	st := storagetest.New()
	s := schedule.New(st, schedule.Options{})
	mustPlan(t, s, ptr[int64](3600), nil, nil, now0, time.UTC)
	if _, err := s.FireDue(now0); err != nil { // first call reads the store
		t.Fatal(err)
	}
	txns := st.Txns() // an idle FireDue must not touch the store at all
	allocs := testing.AllocsPerRun(100, func() {
		if sigs, err := s.FireDue(now0.Add(time.Minute)); err != nil || sigs != nil {
			t.Fatalf("FireDue = %v, %v", sigs, err)
		}
	})
	if allocs != 0 {
		t.Errorf("idle FireDue allocates %v times", allocs)
	}
	if n := st.Txns() - txns; n != 0 {
		t.Errorf("idle FireDue ran %d transactions", n)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	s := schedule.New(st, schedule.Options{Clock: braintest.NewClock(now0.Add(time.Hour))})
	item := mustPlan(t, s, ptr[int64](60), nil, nil, now0, time.UTC)
	ctx, cancel := context.WithCancel(context.Background())
	var got []brain.Signal
	err := s.Run(ctx, time.Hour, func(_ context.Context, sigs []brain.Signal) error {
		got = append(got, sigs...)
		cancel()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Ref != item.ID {
		t.Errorf("emitted %+v", got)
	}
}

func TestTools(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	s := schedule.New(st, schedule.Options{})
	tools := map[string]brain.Tool{}
	for _, tool := range s.Tools() {
		spec := tool.Spec()
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Additional *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		if schema.Additional == nil || *schema.Additional || len(schema.Required) != len(schema.Properties) || !spec.SideEffects {
			t.Errorf("%s spec not strict: %+v", spec.Name, spec)
		}
		tools[spec.Name] = tool
	}
	sched, cancel := tools["core_schedule"], tools["core_schedule_cancel"]
	loc := berlin(t)
	now := time.Date(2026, 11, 3, 13, 4, 0, 0, loc)
	call := func(tool brain.Tool, args string) (brain.ToolResult, error) {
		return tool.Call(context.Background(), brain.ToolCall{Chat: 7, User: 70, Args: json.RawMessage(args), Now: now, Zone: loc})
	}

	res, err := call(sched, `{"note":"stretch","delay_seconds":7200,"at":null,"cron":null,"kind":null,"reason":"back pain"}`)
	if err != nil {
		t.Fatal(err)
	}
	intent, ok := res.Intents[0].(brain.Schedule)
	if !ok || len(res.Intents) != 1 {
		t.Fatalf("intents = %#v", res.Intents)
	}
	if want := "scheduled " + intent.Item.ID + " for Tue 3 Nov 15:04 CET (in 2h)"; res.Content != want {
		t.Errorf("content = %q, want %q", res.Content, want)
	}
	if it := intent.Item; it.Chat != 7 || it.User != 70 || it.Reason != "back pain" || it.Kind != brain.KindReminder {
		t.Errorf("item = %+v", it)
	}
	if items, _ := s.List(7); len(items) != 0 {
		t.Error("core_schedule stored the item itself")
	}

	res, err = call(sched, `{"note":"ask how the interview went","delay_seconds":null,"at":null,"cron":"0 9 * * 1","kind":"followup","reason":null}`)
	if err != nil {
		t.Fatal(err)
	}
	item := res.Intents[0].(brain.Schedule).Item
	if item.Kind != brain.KindFollowup || !strings.Contains(res.Content, "0 9 * * 1 (Europe/Berlin), next Mon 9 Nov 09:00 CET (in 5d 19h)") {
		t.Errorf("content = %q, item %+v", res.Content, item)
	}

	for _, tc := range []struct{ name, tool, args, err string }{
		{"two times", "core_schedule", `{"note":"x","delay_seconds":60,"at":"2026-11-04T10:00","cron":null,"kind":null,"reason":null}`, "exactly one"},
		{"bad kind", "core_schedule", `{"note":"x","delay_seconds":60,"at":null,"cron":null,"kind":"nag","reason":null}`, "kind must be"},
		{"unknown field", "core_schedule", `{"note":"x","delay_seconds":60,"when":"now"}`, "unknown field"},
		{"no note", "core_schedule", `{"delay_seconds":60}`, "note is required"},
		{"string delay", "core_schedule", `{"note":"x","delay_seconds":"60"}`, "invalid arguments"},
		{"bad cron", "core_schedule", `{"note":"x","delay_seconds":null,"at":null,"cron":"TZ=0","kind":null,"reason":null}`, "zone"},
		{"cancel no id", "core_schedule_cancel", `{"id":""}`, "id is required"},
		{"cancel unknown id, none", "core_schedule_cancel", `{"id":"aaaaaa"}`, "this chat has none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(tools[tc.tool], tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}

	if err := s.Add(intent.Item); err != nil {
		t.Fatal(err)
	}
	if _, err := call(cancel, `{"id":"zzzzzz"}`); err == nil || !strings.Contains(err.Error(), intent.Item.ID) {
		t.Errorf("unknown id error = %v, want it to list %s", err, intent.Item.ID)
	}
	res, err = call(cancel, `{"id":"`+strings.ToUpper(intent.Item.ID)+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := (brain.CancelSchedule{Chat: 7, ID: intent.Item.ID}); len(res.Intents) != 1 || res.Intents[0] != want {
		t.Errorf("intents = %#v, want %#v", res.Intents, want)
	}
	// In a group a run acts for its sender: another member's item is neither listed nor
	// cancelled.
	res, err = cancel.Call(context.Background(), brain.ToolCall{Chat: 7, User: 71, Args: json.RawMessage(`{"id":"` + intent.Item.ID + `"}`), Now: now, Zone: loc})
	if err == nil || len(res.Intents) != 0 || strings.Contains(err.Error(), intent.Item.ID+",") {
		t.Errorf("another member's cancel = %#v, %v; want refused", res.Intents, err)
	}
}

// TestFormatLines: one page of /reminders, each item on its own line.
func TestFormatLines(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	now := time.Date(2026, 11, 3, 13, 4, 0, 0, loc)
	if got := schedule.FormatPage(nil, 1, loc, now); got != "You have no reminders." {
		t.Errorf("empty list = %q", got)
	}
	items := []brain.ScheduleItem{
		{ID: "abcdef", Note: "call\nmum", Due: now.Add(2 * time.Hour)},
		{ID: "k2k2k2", Note: "stretch", Due: time.Date(2026, 11, 4, 9, 0, 0, 0, loc), Cron: "0 9 * * *", Zone: "Europe/Berlin"},
		{ID: "zz2345", Note: "ask about the exam", Due: now.Add(26 * time.Hour), Kind: brain.KindFollowup, Cron: "@weekly", Zone: "UTC"},
	}
	want := "Your reminders:\n" +
		"• abcdef — Tue 3 Nov 15:04 CET (in 2h): call mum\n" +
		"• k2k2k2 — Wed 4 Nov 09:00 CET (in 19h 56m), repeats 0 9 * * *: stretch\n" +
		"• zz2345 — Wed 4 Nov 15:04 CET (in 1d 2h), repeats @weekly (UTC), my follow-up: ask about the exam"
	if got := schedule.FormatPage(items, 1, loc, now); got != want {
		t.Errorf("list =\n%s\nwant\n%s", got, want)
	}
}

func FuzzPlanCron(f *testing.F) {
	for _, seed := range []string{"0 9 * * *", "TZ=0", "CRON_TZ=x * * * * *", "61 * * * *", "", "@daily",
		"@every 1h", "*/15 * * * *", "0 0 29 2 *", "0-59/0 * * * *", "1-0 * * * *", "? ? ? ? ?", "@every -1s"} {
		f.Add(seed)
	}
	s := schedule.New(storagetest.New(), schedule.Options{})
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		item, err := s.Plan(schedule.PlanArgs{Chat: 1, User: 1, Note: "note", Cron: &spec, Now: now0, Zone: loc})
		if err != nil {
			if !errors.Is(err, schedule.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if !item.Due.After(now0) {
			t.Fatalf("spec %q: due %v not after now", spec, item.Due)
		}
	})
}

func addTxDuringRescanStillFires[T schedule.Tx](t *testing.T, st inboxStore[T]) {
	s := schedule.New(st, schedule.Options{})
	item, err := s.Plan(schedule.PlanArgs{Chat: 7, User: 70, Note: "call mum", DelaySeconds: ptr[int64](60), Now: now0, Zone: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	added, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		committed <- st.Update(func(tx T) error {
			if err := s.AddTx(tx, item); err != nil {
				return err
			}
			close(added)
			<-release
			return nil
		})
	}()
	<-added
	fired := make(chan error, 1)
	go func() {
		_, err := s.FireDue(now0) // nothing is due; it rescans while the add is uncommitted
		fired <- err
	}()
	select {
	case err := <-fired: // it did not wait for the open transaction
		close(release)
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(200 * time.Millisecond): // it waits for the transaction: let it commit
		close(release)
		if err := <-fired; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	sigs, err := s.FireDue(item.Due)
	if err != nil || len(sigs) != 1 || sigs[0].Ref != item.ID {
		t.Fatalf("FireDue at due = %+v, %v; want the item added during the rescan", sigs, err)
	}
}

// TestCaps: core_schedule refuses beyond MaxPerRun new items in one run and beyond
// MaxPending items in a chat, saying why; AddTx refuses beyond MaxPending too (turns
// committed together can pass the tool's check together). Refusals are counted.
func TestCaps(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	reg := prometheus.NewRegistry()
	s := schedule.New(st, schedule.Options{MaxPending: 3, MaxPerRun: 2, Refusals: brain.NewRefusals(reg)})
	tool := s.Tools()[0]
	now := time.Date(2026, 11, 3, 13, 4, 0, 0, time.UTC)
	call := func(i int, earlier []brain.Intent) (brain.ToolResult, error) {
		return tool.Call(context.Background(), brain.ToolCall{Chat: 7, User: 70, Now: now, Earlier: earlier,
			Args: json.RawMessage(fmt.Sprintf(`{"note":"n%d","delay_seconds":%d,"at":null,"cron":null,"kind":null,"reason":null}`, i, 60+i))})
	}
	var run []brain.Intent
	for i := range 3 {
		res, err := call(i, run)
		if i < 2 {
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			run = append(run, res.Intents...)
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "at most 2 new reminders per turn") {
			t.Errorf("third call in one run: %v, want the per-run refusal", err)
		}
	}
	for _, in := range run {
		if err := s.Add(in.(brain.Schedule).Item); err != nil {
			t.Fatal(err)
		}
	}
	// A new run: one more fits (3 pending), then the chat is full.
	res, err := call(10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(11, res.Intents); err == nil || !strings.Contains(err.Error(), "already has 3 pending reminders") {
		t.Errorf("call past the chat's cap: %v", err)
	}
	if err := s.Add(res.Intents[0].(brain.Schedule).Item); err != nil {
		t.Fatal(err)
	}
	// The store refuses a fourth, even when the tool was not asked.
	extra := res.Intents[0].(brain.Schedule).Item
	extra.ID = "zz7zz7"
	if err := s.Add(extra); !errors.Is(err, schedule.ErrTooMany) {
		t.Errorf("Add past the cap = %v, want ErrTooMany", err)
	}
	// Replacing an existing item is not a new one.
	if err := s.Add(res.Intents[0].(brain.Schedule).Item); err != nil {
		t.Errorf("re-adding a stored item: %v", err)
	}
	if n, _ := s.Pending(7); n != 3 {
		t.Errorf("%d pending, want 3", n)
	}
	want := map[string]float64{brain.LimitRemindersPerRun: 1, brain.LimitPendingReminders: 2}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := m.GetLabel()[0].GetValue()
			if w, ok := want[l]; ok && m.GetCounter().GetValue() != w {
				t.Errorf("refusals{limit=%s} = %v, want %v", l, m.GetCounter().GetValue(), w)
			}
		}
	}
}

func TestFormatPage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	var items []brain.ScheduleItem
	for i := range 45 {
		items = append(items, brain.ScheduleItem{ID: fmt.Sprintf("id%04d", i), Note: "n", Due: now.Add(time.Duration(i+1) * time.Hour)})
	}
	for _, tc := range []struct {
		page        int
		lines       int
		has, hasNot string
	}{
		{1, 20, "… and 25 more — /reminders 2 for the next page", ""},
		{2, 20, "… and 5 more — /reminders 3 for the next page", "id0019"},
		{3, 5, "(41–45 of 45)", "more —"},
		{4, 0, "only 3 page(s)", "•"},
	} {
		t.Run(fmt.Sprint(tc.page), func(t *testing.T) {
			got := schedule.FormatPage(items, tc.page, time.UTC, now)
			if n := strings.Count(got, "\n• "); n != tc.lines || !strings.Contains(got, tc.has) || (tc.hasNot != "" && strings.Contains(got, tc.hasNot)) {
				t.Errorf("page %d (%d lines):\n%s", tc.page, n, got)
			}
		})
	}
	if got := schedule.FormatPage(items[:3], 1, time.UTC, now); strings.Contains(got, "more") || !strings.HasPrefix(got, "Your reminders:") {
		t.Errorf("one page:\n%s", got)
	}
	if got := schedule.FormatPage(nil, 1, time.UTC, now); got != "You have no reminders." {
		t.Errorf("none: %q", got)
	}
}

func TestOneShotDelayFiresOnceOnTime(t *testing.T) {
	t.Parallel()
	onBothStores(t, oneShotDelayFiresOnceOnTime[*storage.Tx], oneShotDelayFiresOnceOnTime[*storagetest.Tx])
}

func TestSurvivesRestartAndFiresOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	s := schedule.New(st, schedule.Options{})
	item := mustPlan(t, s, ptr[int64](600), nil, nil, now0, time.UTC)
	_ = st.Close()

	st = storagetest.Open(t, path)
	s = schedule.New(st, schedule.Options{})
	items, err := s.List(7)
	if err != nil || len(items) != 1 || items[0].ID != item.ID {
		t.Fatalf("after reopen: %+v, %v", items, err)
	}
	if sigs, _ := s.FireDue(now0.Add(5 * time.Minute)); len(sigs) != 0 {
		t.Fatalf("fired early: %+v", sigs)
	}
	if sigs, _ := s.FireDue(now0.Add(10 * time.Minute)); len(sigs) != 1 {
		t.Fatalf("did not fire: %+v", sigs)
	}
	_ = st.Close()

	st = storagetest.Open(t, path)
	s = schedule.New(st, schedule.Options{})
	if sigs, _ := s.FireDue(now0.Add(time.Hour)); len(sigs) != 0 {
		t.Errorf("fired again after restart: %+v", sigs)
	}
	if p, _ := st.Pending(); len(p) != 1 {
		t.Errorf("inbox = %+v, want the one signal", p)
	}
}

func TestForgetDropsSchedules(t *testing.T) {
	t.Parallel()
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	s := schedule.New(st, schedule.Options{})
	mustPlan(t, s, ptr[int64](60), nil, nil, now0, time.UTC)
	if err := st.Forget(7); err != nil {
		t.Fatal(err)
	}
	if items, _ := s.List(7); len(items) != 0 {
		t.Errorf("items after forget: %+v", items)
	}
	if sigs, _ := s.FireDue(now0.Add(time.Hour)); len(sigs) != 0 {
		t.Errorf("fired after forget: %+v", sigs)
	}
}

func BenchmarkFireDueIdle(b *testing.B) {
	st := storagetest.Open(b, filepath.Join(b.TempDir(), "anima.db"))
	s := schedule.New(st, schedule.Options{})
	item, err := s.Plan(schedule.PlanArgs{Chat: 1, User: 1, Note: "x", DelaySeconds: ptr[int64](3600), Now: now0, Zone: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Add(item); err != nil {
		b.Fatal(err)
	}
	if _, err := s.FireDue(now0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if sigs, _ := s.FireDue(now0); sigs != nil {
			b.Fatal("fired")
		}
	}
}

// An item added inside a transaction that is still open (AddTx from the core loop's
// commit) while FireDue rescans must still fire when due: the rescan may not drop its due
// time from the idle bound just because the scan could not see the uncommitted item yet.
func TestAddTxDuringRescanStillFires(t *testing.T) {
	t.Parallel()
	onBothStores(t, addTxDuringRescanStillFires[*storage.Tx], addTxDuringRescanStillFires[*storagetest.Tx])
}

// TestRecountAfterForget: a user's /forget deletes their reminders in the store, behind
// the scheduler; Recount lowers the pending gauge to what is left.
func TestRecountAfterForget(t *testing.T) {
	t.Parallel()
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	s := schedule.New(st, schedule.Options{Registerer: prometheus.NewRegistry()})
	mustPlan(t, s, ptr[int64](3600), nil, nil, now0, time.UTC)
	mustPlan(t, s, ptr[int64](7200), nil, nil, now0, time.UTC)
	if got := testutil.ToFloat64(s.MetricsPending()); got != 2 {
		t.Fatalf("pending = %v, want 2", got)
	}
	if _, err := st.ForgetUser(70, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Recount(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(s.MetricsPending()); got != 0 {
		t.Errorf("pending after the user's /forget = %v, want 0", got)
	}
}
