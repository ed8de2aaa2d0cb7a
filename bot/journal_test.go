package bot

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/storage"
)

// journalEnv is a journal over a real store, memory and scheduler, with one recorded
// signal (chat 5, user 7) and one scheduled reminder "abcdef" of chat 5.
type journalEnv struct {
	j     *journal
	store *storage.Store
	mem   *memory.Memory
	sched *schedule.Scheduler
	sig   brain.Signal
	at    time.Time
}

func newJournalEnv(t *testing.T) *journalEnv {
	t.Helper()
	store := openStore(t)
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	mem, err := memory.New(store, nil, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := &journalEnv{store: store, at: at, mem: mem, sched: schedule.New(store, schedule.Options{})}
	e.j = &journal{store: store, index: e.mem, facts: e.mem, sched: e.sched, log: slog.New(slog.DiscardHandler)}
	if err := e.sched.Add(brain.ScheduleItem{ID: "abcdef", Chat: 5, User: 7, Note: "water the plants", Due: at.Add(time.Hour), Created: at}); err != nil {
		t.Fatal(err)
	}
	sigs, err := store.Record("test", []brain.Signal{{Type: brain.SignalUserMessage, Source: "test", Chat: 5, User: 7, Text: "hi", At: at}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.sig = sigs[0]
	return e
}

// turn is a record of the env's signal answered with one reply and intents.
func (e *journalEnv) turn(intents ...brain.Intent) brain.TurnRecord {
	return brain.TurnRecord{Done: []uint64{e.sig.ID}, Chat: 5, User: 7, At: e.at,
		Turns:   []brain.Turn{{Role: "user", Text: "hi", At: e.at}, {Role: "assistant", Text: "hello", At: e.at, Kind: brain.KindReply}},
		Outbox:  []brain.SendMessage{{Chat: 5, Text: "hello", Kind: brain.KindReply}},
		Intents: intents}
}

// facts are user's facts in chat 5 as attribute=value.
func (e *journalEnv) facts(t *testing.T, user int64) []string {
	t.Helper()
	fs, err := e.mem.Facts(5, user)
	return listed(t, fs, err, func(f brain.Fact) string { return f.Attribute + "=" + f.Value })
}

// scheduled are the ids of chat 5's schedule items.
func (e *journalEnv) scheduled(t *testing.T) []string {
	t.Helper()
	items, err := e.sched.List(5)
	return listed(t, items, err, func(it brain.ScheduleItem) string { return it.ID })
}

// listed is name of each of items, which a listing returned with err; it fails the test
// on err.
func listed[T any](t *testing.T, items []T, err error, name func(T) string) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func TestJournalAppliesIntentsInTheTurn(t *testing.T) {
	t.Parallel()
	e := newJournalEnv(t)
	entries, err := e.j.Commit(context.Background(), e.turn(
		brain.Remember{Attribute: "pet", Value: "a cat called Mo"},              // the turn's user
		brain.Remember{User: 9, Attribute: "city", Value: "Lisbon"},             // another user's fact
		brain.Remember{Attribute: "  ", Value: "refused, and the turn goes on"}, // empty: refused
		brain.CancelSchedule{Chat: 5, ID: "abcdef"},
		brain.Schedule{Item: brain.ScheduleItem{ID: "ghijkl", Chat: 5, User: 7, Note: "ask about Mo", Due: e.at.Add(2 * time.Hour), Created: e.at}},
		brain.Defer{Chat: 5, Until: e.at.Add(time.Hour)}, // applied by the loop, not here
	))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Msg.Text != "hello" || !entries[0].Created.Equal(e.at) {
		t.Errorf("outbox entries %+v, want the reply", entries)
	}
	if got, want := e.facts(t, 7), []string{"pet=a cat called Mo"}; !slices.Equal(got, want) {
		t.Errorf("facts of user 7 = %q, want %q", got, want)
	}
	if got, want := e.facts(t, 9), []string{"city=Lisbon"}; !slices.Equal(got, want) {
		t.Errorf("facts of user 9 = %q, want %q", got, want)
	}
	if got, want := e.scheduled(t), []string{"ghijkl"}; !slices.Equal(got, want) {
		t.Errorf("schedules of chat 5 = %q, want %q (abcdef cancelled, ghijkl added)", got, want)
	}
	if pending, err := e.store.Pending(); err != nil || len(pending) != 0 {
		t.Errorf("inbox %+v (%v), want the signal consumed", pending, err)
	}
}

// TestJournalTurnIsAllOrNothing: a turn whose transaction fails after its Remember and
// CancelSchedule were applied leaves neither — nor its history, outbox or consumed signal.
func TestJournalTurnIsAllOrNothing(t *testing.T) {
	t.Parallel()
	e := newJournalEnv(t)
	_, err := e.j.Commit(context.Background(), e.turn(
		brain.Remember{Attribute: "pet", Value: "a cat called Mo"},
		brain.CancelSchedule{Chat: 5, ID: "abcdef"},
		brain.Schedule{Item: brain.ScheduleItem{ID: "bad id", Chat: 5, Due: e.at}}, // fails the transaction
	))
	if err == nil {
		t.Fatal("Commit succeeded with an invalid schedule")
	}
	if got := e.facts(t, 7); len(got) != 0 {
		t.Errorf("facts %q remembered by a failed turn", got)
	}
	if got, want := e.scheduled(t), []string{"abcdef"}; !slices.Equal(got, want) {
		t.Errorf("schedules %q, want %q: a failed turn cancelled it", got, want)
	}
	if pending, err := e.store.Pending(); err != nil || len(pending) != 1 {
		t.Errorf("inbox %+v (%v), want the signal kept for the next try", pending, err)
	}
	if out, err := e.store.PendingOutbox(); err != nil || len(out) != 0 {
		t.Errorf("outbox %+v (%v), want nothing", out, err)
	}
	if h, err := e.store.History(5, 0); err != nil || len(h) != 0 {
		t.Errorf("history %+v (%v), want nothing", h, err)
	}
}
