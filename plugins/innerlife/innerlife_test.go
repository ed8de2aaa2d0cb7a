package innerlife_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

func TestSalienceDayBoundaries(t *testing.T) {
	t.Parallel()
	touched := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		age  time.Duration
		want innerlife.Salience
	}{
		{0, innerlife.Active},
		{7*day - time.Nanosecond, innerlife.Active},
		{7 * day, innerlife.Monitoring},
		{30*day - time.Nanosecond, innerlife.Monitoring},
		{30 * day, innerlife.Background},
		{90*day - time.Nanosecond, innerlife.Background},
		{90 * day, innerlife.Dormant},
	} {
		t.Run(tc.age.String(), func(t *testing.T) {
			if got := innerlife.SalienceAt(touched, touched.Add(tc.age)); got != tc.want {
				t.Errorf("after %v: %v, want %v", tc.age, got, tc.want)
			}
		})
	}
}

// host is a plugins.Host: it counts dream runs and applies their intents to the plugin.
// Dreams run two at once, so it locks.
type host struct {
	mu     sync.Mutex
	p      *innerlife.Plugin
	b      pluginstest.Bucket
	rels   []brain.Relationship
	thinks int
	woke   []brain.Wake
}

func (h *host) Chats() ([]brain.Relationship, error) { return h.rels, nil }
func (h *host) Think(_ context.Context, w brain.Wake) (brain.Outcome, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.thinks++
	h.woke = append(h.woke, w)
	if w.Profile != brain.ProfileDream {
		panic("a dream must run under the dream profile")
	}
	return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: "never sent"}}, Requests: 1}, nil
}
func (h *host) Commit(_ context.Context, _, _ int64, ins []brain.Intent, at time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, in := range ins {
		if _, ok := in.(brain.SendMessage); ok {
			panic("a dream sent a message")
		}
		if c, ok := in.(brain.PluginChange); ok {
			if err := h.p.Apply(h.b, c, at); err != nil {
				return err
			}
		}
	}
	return nil
}
func (h *host) Recent(int64, int) ([]brain.Turn, error) { return nil, nil }

type jobLog map[string]time.Time

func (l jobLog) LastRun(k string) (time.Time, bool, error) { t, ok := l[k]; return t, ok, nil }
func (l jobLog) SetLastRun(k string, t time.Time) error    { l[k] = t; return nil }

// TestDreamWeek: a simulated week with 3 active days and 4 silent ones costs exactly 3
// dream runs; a dream missed while anima was down runs once after a restart (< 12 h late)
// and is skipped when it is later than that.
func TestDreamWeek(t *testing.T) {
	t.Parallel()
	zone := time.UTC
	start := time.Date(2025, 3, 3, 10, 0, 0, 0, zone) // a Monday
	clock := braintest.NewClock(start)
	p := innerlife.New(innerlife.Config{}, innerlife.Options{Clock: clock, Registerer: prometheus.NewRegistry()})
	set, err := plugins.Install(nopRegistry{}, plugins.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	h := &host{p: p, b: pluginstest.Bucket{}, rels: []brain.Relationship{{Chat: 7, User: 7}}}
	log := jobLog{}
	jobs := plugins.NewJobs(set, h, log, zone)
	active := map[int]bool{0: true, 2: true, 4: true} // Mon, Wed, Fri
	for day := 0; day < 7; day++ {
		if active[day] {
			at := start.AddDate(0, 0, day).Add(2 * time.Hour) // 12:00
			h.rels[0].LastUserMsg, h.rels[0].LastAgentMsg = at, at.Add(time.Second)
		}
		for m := 0; m < 24*60; m += 10 { // step every 10 minutes of the day
			clock.Set(start.AddDate(0, 0, day).Add(time.Duration(m) * time.Minute))
			jobs.Step(context.Background(), clock.Now())
		}
	}
	if h.thinks != 3 {
		t.Fatalf("a week with 3 active days cost %d dream runs, want 3", h.thinks)
	}

	// A restart 3 h after the dream time, with a turn since the last dream: it runs once.
	h.rels[0].LastUserMsg = clock.Now()
	h.rels[0].LastAgentMsg = clock.Now()
	restart := time.Date(2025, 3, 11, 7, 0, 0, 0, zone) // 04:00 was missed by 3 h
	clock.Set(restart)
	jobs = plugins.NewJobs(set, h, log, zone)
	jobs.Step(context.Background(), restart)
	jobs.Step(context.Background(), restart.Add(time.Minute))
	if h.thinks != 4 {
		t.Errorf("a dream missed by 3 h ran %d times after the restart, want once", h.thinks-3)
	}
	// A restart 13 h late: skipped.
	h.rels[0].LastUserMsg = restart.Add(time.Hour)
	h.rels[0].LastAgentMsg = restart.Add(time.Hour)
	late := time.Date(2025, 3, 12, 17, 0, 0, 0, zone)
	clock.Set(late)
	jobs = plugins.NewJobs(set, h, log, zone)
	jobs.Step(context.Background(), late)
	if h.thinks != 4 {
		t.Errorf("a dream missed by 13 h ran after the restart; want it skipped")
	}
}

type nopRegistry struct{}

func (nopRegistry) Register(brain.Tool) error { return nil }

// TestDreamInEachUsersZone: the dream runs at dream_at in each user's own zone (their
// /timezone override; an unknown zone falls back to the default), once per chat.
func TestDreamInEachUsersZone(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)
	clock := braintest.NewClock(start)
	p := innerlife.New(innerlife.Config{}, innerlife.Options{Clock: clock, Registerer: prometheus.NewRegistry()})
	set, err := plugins.Install(nopRegistry{}, plugins.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	talked := start.Add(-2 * time.Hour)
	h := &host{p: p, b: pluginstest.Bucket{}, rels: []brain.Relationship{
		{Chat: 7, User: 7, LastUserMsg: talked, LastAgentMsg: talked},
		{Chat: 8, User: 8, Timezone: "Asia/Tokyo", LastUserMsg: talked, LastAgentMsg: talked},
		{Chat: 9, User: 9, Timezone: "Mars/Olympus", LastUserMsg: talked, LastAgentMsg: talked},
	}}
	jobs := plugins.NewJobs(set, h, jobLog{}, time.UTC)
	for m := 0; m <= 48*60; m += 10 {
		clock.Set(start.Add(time.Duration(m) * time.Minute))
		jobs.Step(context.Background(), clock.Now())
	}
	want := map[int64]time.Time{
		7: time.Date(2025, 3, 3, 4, 0, 0, 0, time.UTC),
		8: time.Date(2025, 3, 4, 4, 0, 0, 0, tokyo), // 04:00 in Tokyo on the 3rd was before the first step (19:00 UTC on the 2nd)
		9: time.Date(2025, 3, 3, 4, 0, 0, 0, time.UTC),
	}
	got := map[int64]time.Time{}
	for _, w := range h.woke {
		if _, dup := got[w.Chat]; dup {
			t.Errorf("chat %d dreamt twice (no turn since its first dream)", w.Chat)
		}
		got[w.Chat] = w.At
	}
	for chat, at := range want {
		if !got[chat].Equal(at) {
			t.Errorf("chat %d dreamt at %v, want %v", chat, got[chat].UTC(), at.UTC())
		}
	}
}
