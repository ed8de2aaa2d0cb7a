package innerlife_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// dreamer is a plugins.Host whose Think is a scripted model: it reads the run's section
// (as cognition does at the start of a run), then calls the tools the script names with
// each call seeing the earlier ones, and answers with a message (which a dream must drop).
type dreamer struct {
	host
	tools   map[string]brain.Tool
	script  func(sec brain.Section) []brain.ToolCall
	names   []string // the tool of each call of the script
	section brain.Section
	refused []error
}

func (d *dreamer) Think(_ context.Context, w brain.Wake) (brain.Outcome, error) {
	if w.Profile != brain.ProfileDream {
		panic("a dream must run under the dream profile")
	}
	d.thinks++
	d.section = d.p.Context(w, w.At)
	ins := slices.Clone(d.section.Intents)
	calls := d.script(d.section)
	for i, c := range calls {
		c.Chat, c.User, c.Now, c.Earlier = w.Chat, w.User, w.At, slices.Clone(ins)
		res, err := d.tools[d.names[i]].Call(context.Background(), c)
		if err != nil {
			d.refused = append(d.refused, err)
			continue
		}
		ins = append(ins, res.Intents...)
	}
	ins = append(ins, brain.SendMessage{Chat: w.Chat, Text: "never sent"})
	return brain.Outcome{Intents: ins, Requests: 2}, nil
}

func newDreamer(p *innerlife.Plugin, b pluginstest.Bucket, rel brain.Relationship) *dreamer {
	d := &dreamer{host: host{p: p, b: b, rels: []brain.Relationship{rel}}, tools: map[string]brain.Tool{}}
	for _, t := range p.Tools() {
		d.tools[t.Spec().Name] = t
	}
	return d
}

// dreamOnce runs the dream job once at at.
func dreamOnce(t *testing.T, p *innerlife.Plugin, h plugins.Host, clock *braintest.Clock, at time.Time) {
	t.Helper()
	clock.Set(at)
	for _, j := range p.Jobs() {
		if err := j.Run(context.Background(), h, at, mustChats(t, h)); err != nil {
			t.Fatal(err)
		}
	}
}

func mustChats(t *testing.T, h plugins.Host) []brain.Relationship {
	rels, err := h.Chats()
	if err != nil {
		t.Fatal(err)
	}
	return rels
}

func lines(sec brain.Section, prefix string) []string {
	var out []string
	for _, l := range sec.Lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func themesArgs(themes ...string) json.RawMessage {
	data, _ := json.Marshal(map[string][]string{"themes": themes})
	return data
}

// TestDreamFoldsOldJournalIntoReflections (issue 17 item 3): a dream is shown the journal
// entries older than a week, folds them with innerlife_reflect into at most 3 themes of at
// most 200 characters; the folded entries leave prompts and /thoughts (they stay in the
// store, searchable), the themes join them for every later run, survive a restart and go
// with /forget. Outside a dream nothing can be folded.
func TestDreamFoldsOldJournalIntoReflections(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)
	p, clock, reg := newPluginAt(start)
	b := pluginstest.Bucket{}
	// An entry every evening for 14 days.
	for day := range 14 {
		at := start.AddDate(0, 0, day)
		apply(t, p, b, at, innerlife.EntryChange(7, fmt.Sprintf("evening note %d about the garden", day), at))
	}
	night := start.AddDate(0, 0, 14).Add(8 * time.Hour) // Sun 16 Mar 04:00
	rel := brain.Relationship{Chat: 7, User: 7, LastUserMsg: night.Add(-6 * time.Hour)}
	d := newDreamer(p, b, rel)
	d.names = []string{"innerlife_reflect", "innerlife_reflect"}
	d.script = func(brain.Section) []brain.ToolCall {
		return []brain.ToolCall{{Args: themesArgs("They tend the garden every evening; it steadies them.", "   ")},
			{Args: themesArgs("a second fold")}}
	}
	dreamOnce(t, p, d, clock, night)

	fold := lines(d.section, "to fold: ")
	if len(fold) != 8 { // days 0–7 are at least a week old at night (day 8 is 6 d 8 h old)
		t.Fatalf("the dream was shown %d entries to fold, want the 8 older than a week:\n%s", len(fold), strings.Join(d.section.Lines, "\n"))
	}
	if !strings.Contains(fold[0], "evening note 0 ") || !strings.Contains(fold[7], "evening note 7 ") {
		t.Errorf("entries to fold, oldest first: %q … %q", fold[0], fold[7])
	}
	if len(d.refused) != 1 || !strings.Contains(d.refused[0].Error(), "already folded") {
		t.Errorf("a second fold in one dream: refusals %v, want one saying it already folded", d.refused)
	}
	if got := pluginstest.Value(t, reg, "anima_innerlife_journal_folded_total"); got != 8 {
		t.Errorf("anima_innerlife_journal_folded_total = %v, want 8", got)
	}

	check := func(t *testing.T, p *innerlife.Plugin) {
		t.Helper()
		at := night.Add(10 * time.Hour)
		sec := p.Context(brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileChat, Rel: rel}, at)
		want := "looking back on 1 Mar–8 Mar (8 entries): They tend the garden every evening; it steadies them."
		if got := lines(sec, "looking back"); len(got) != 1 || got[0] != want {
			t.Errorf("chat prompt's reflections = %q, want [%q]", got, want)
		}
		journal := lines(sec, "journal, ")
		if len(journal) != 3 || !strings.Contains(journal[0], "evening note 13 ") {
			t.Errorf("chat prompt's journal lines = %q, want the 3 latest, newest first", journal)
		}
		thoughts, _ := p.Command(7, 7, "/thoughts", "", at, time.UTC)
		if !strings.Contains(thoughts, "Looking back:\n• They tend the garden every evening") {
			t.Errorf("/thoughts lacks the reflection:\n%s", thoughts)
		}
		if strings.Contains(thoughts, "evening note 3 ") || !strings.Contains(thoughts, "evening note 13 ") {
			t.Errorf("/thoughts shows a folded entry or lacks the latest:\n%s", thoughts)
		}
		// The next dream folds nothing more (days 8–13 are not a week old yet).
		dsec := p.Context(brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileDream, Rel: rel}, at)
		if got := lines(dsec, "to fold: "); len(got) != 0 {
			t.Errorf("folded entries offered again: %q", got)
		}
	}
	check(t, p)

	// Folded entries stay in the store and are found by memory search, as are reflections.
	hits, err := p.Search(b, 7, 7, "garden", 50)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, h := range hits {
		sources = append(sources, h.Source)
	}
	if n := strings.Count(strings.Join(sources, " "), innerlife.SourceJournal); n != 14 || !slices.Contains(sources, innerlife.SourceReflection) {
		t.Errorf("search for garden found sources %v; want all 14 entries and the reflection", sources)
	}

	t.Run("restart", func(t *testing.T) {
		p2, _ := newPluginOn(clock)
		if err := p2.Load(b); err != nil {
			t.Fatal(err)
		}
		check(t, p2)
	})

	t.Run("not outside a dream", func(t *testing.T) {
		tool := d.tools["innerlife_reflect"]
		_, err := tool.Call(context.Background(), brain.ToolCall{Chat: 7, User: 7, Now: night.Add(time.Hour), Args: themesArgs("x")})
		if err == nil || !strings.Contains(err.Error(), "nothing to fold") {
			t.Errorf("innerlife_reflect outside a dream: %v, want nothing to fold", err)
		}
		if spec := tool.Spec(); !slices.Equal(spec.Profiles, []brain.Profile{brain.ProfileDream}) {
			t.Errorf("innerlife_reflect profiles %v, want dream only", spec.Profiles)
		}
	})

	t.Run("forget", func(t *testing.T) {
		if err := p.Forget(b, 7); err != nil {
			t.Fatal(err)
		}
		if len(b) != 0 {
			t.Errorf("%d keys left after /forget", len(b))
		}
		sec := p.Context(brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileChat, Rel: rel}, night)
		if got := lines(sec, "looking back"); len(got) != 0 {
			t.Errorf("reflections in a prompt after /forget: %q", got)
		}
	})
}

// TestReflectRefusesBadThemes: more than 3 themes, a theme over 200 characters, or none.
func TestReflectRefusesBadThemes(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)
	p, clock, _ := newPluginAt(start)
	b := pluginstest.Bucket{}
	apply(t, p, b, start, innerlife.EntryChange(7, "an old note", start))
	night := start.AddDate(0, 0, 9)
	long := strings.Repeat("x", innerlife.MaxReflectionChars+1)
	for _, tc := range []struct {
		name   string
		themes []string
		want   string
	}{
		{"four", []string{"a", "b", "c", "d"}, "at most 3"},
		{"long", []string{long}, "at most 200"},
		{"none", []string{" "}, "themes is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDreamer(p, b, brain.Relationship{Chat: 7, User: 7, LastUserMsg: night.Add(-time.Hour)})
			d.names = []string{"innerlife_reflect"}
			d.script = func(brain.Section) []brain.ToolCall { return []brain.ToolCall{{Args: themesArgs(tc.themes...)}} }
			dreamOnce(t, p, d, clock, night)
			if len(d.refused) != 1 || !strings.Contains(d.refused[0].Error(), tc.want) {
				t.Errorf("refusals %v, want one saying %q", d.refused, tc.want)
			}
			night = night.Add(innerlife.DreamEvery) // the next case's dream
		})
	}
}

// TestDreamOpensConcerns (issue 17 item 3): the dream profile offers the concern tool
// (its description says a dream opens what the day implied) and the
// reflect tool, the proactive profile not the latter; a dream may open concerns the day
// implied, within the caps (at most 3 a run), and still sends nothing.
func TestDreamOpensConcerns(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 3, 3, 20, 0, 0, 0, time.UTC)
	p, clock, reg := newPluginAt(start)
	cog := cognition.NewRegistry()
	for _, tool := range p.Tools() {
		if err := cog.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	names := func(pr brain.Profile) []string {
		var out []string
		for _, tool := range cog.Tools(pr) {
			out = append(out, tool.Spec().Name)
		}
		return out
	}
	if got := names(brain.ProfileDream); !slices.Contains(got, "innerlife_concern") || !slices.Contains(got, "innerlife_reflect") {
		t.Errorf("the dream profile offers %v; want innerlife_concern and innerlife_reflect", got)
	}
	if got := names(brain.ProfileProactive); slices.Contains(got, "innerlife_reflect") {
		t.Errorf("the proactive profile offers innerlife_reflect: %v", got)
	}
	if desc := p.Tools()[0].Spec().Description; !strings.Contains(desc, "nightly reflection, also open") {
		t.Errorf("innerlife_concern's description does not say a dream opens concerns: %s", desc)
	}

	b := pluginstest.Bucket{}
	night := start.Add(8 * time.Hour)
	d := newDreamer(p, b, brain.Relationship{Chat: 7, User: 7, LastUserMsg: start})
	d.names = []string{"innerlife_concern", "innerlife_concern", "innerlife_concern", "innerlife_concern"}
	d.script = func(brain.Section) []brain.ToolCall {
		var calls []brain.ToolCall
		for i := range 4 {
			calls = append(calls, brain.ToolCall{Args: json.RawMessage(openArgs(i, start.Add(72*time.Hour)))})
		}
		return calls
	}
	dreamOnce(t, p, d, clock, night) // the host panics if a message is committed
	if got := pluginstest.Value(t, reg, "anima_innerlife_concerns", "salience", "active"); got != innerlife.MaxOpenedPerRun {
		t.Errorf("a dream opening 4 concerns left %v open, want %d", got, innerlife.MaxOpenedPerRun)
	}
	if len(d.refused) != 1 || !strings.Contains(d.refused[0].Error(), "at most 3 concerns may be opened in one run") {
		t.Errorf("refusals %v", d.refused)
	}
	status := p.Status(7, 7, night, time.UTC)
	if !strings.Contains(status, "thing 0") {
		t.Errorf("/status lacks a concern the dream opened: %q", status)
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
	p, clock, _ := newPluginAt(start)
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
	p, clock, _ := newPluginAt(start)
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
	zones := map[int64]string{7: "UTC", 8: "Asia/Tokyo", 9: "UTC"}
	for _, w := range h.woke {
		if _, dup := got[w.Chat]; dup {
			t.Errorf("chat %d dreamt twice (no turn since its first dream)", w.Chat)
		}
		got[w.Chat] = w.At
		// The dream reads and writes on its person's clock (issue 35: it ran in the
		// service's zone, so a Chicago evening read as [today 01:37]).
		if w.Loc == nil || w.Loc.String() != zones[w.Chat] {
			t.Errorf("chat %d dreamt in zone %v, want %s", w.Chat, w.Loc, zones[w.Chat])
		}
	}
	for chat, at := range want {
		if !got[chat].Equal(at) {
			t.Errorf("chat %d dreamt at %v, want %v", chat, got[chat].UTC(), at.UTC())
		}
	}
}

// TestSelfTools: the dream's self note and share tools check their arguments, say what is
// wrong in words the model can act on, are offered to the dream only, and make the
// relationship's intents.
func TestSelfTools(t *testing.T) {
	t.Parallel()
	cog := cognition.NewRegistry()
	for _, tool := range []brain.Tool{innerlife.SelfNoteTool, innerlife.ShareLaterTool} {
		if err := cog.Register(tool); err != nil { // strict schema
			t.Fatal(err)
		}
	}
	// Neither is offered to a chat turn (before issue 33 the chat profile was offered every
	// tool, and a group member's words became the group's self note) nor to a proactive one.
	for _, pr := range []brain.Profile{brain.ProfileChat, brain.ProfileProactive, ""} {
		for _, tool := range cog.Tools(pr) {
			if n := tool.Spec().Name; strings.HasPrefix(n, "innerlife_s") {
				t.Errorf("profile %s is offered %s, a dream-only tool", pr, n)
			}
		}
	}
	now := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)
	three := []brain.Intent{brain.ShareLater{}, brain.ShareLater{}, brain.ShareLater{}}
	for _, tc := range []struct {
		name    string
		tool    brain.Tool
		args    string
		earlier []brain.Intent
		err     string
		want    brain.Intent
	}{
		{"note", innerlife.SelfNoteTool, `{"note":"She calls me  the owl.\n\nI think herons are patient."}`, nil, "",
			brain.SetSelfNote{Chat: 7, Note: "She calls me the owl.\nI think herons are patient."}},
		{"note too long", innerlife.SelfNoteTool, `{"note":"` + strings.Repeat("a", 1001) + `"}`, nil, "at most 1000", nil},
		{"empty note", innerlife.SelfNoteTool, `{"note":"  "}`, nil, "empty", nil},
		{"unknown field", innerlife.SelfNoteTool, `{"note":"x","mood":"y"}`, nil, "invalid arguments", nil},
		{"share", innerlife.ShareLaterTool, `{"text":"the heron  I saw","tied_to":"their canal walk","expires_in_days":3,"matters":2}`, nil, "",
			brain.ShareLater{Chat: 7, Share: brain.Share{Text: "the heron I saw", TiedTo: "their canal walk", At: now,
				Expires: now.Add(72 * time.Hour), Matters: 2}}},
		{"share without matters", innerlife.ShareLaterTool, `{"text":"x","tied_to":"y","expires_in_days":3}`, nil, "",
			brain.ShareLater{Chat: 7, Share: brain.Share{Text: "x", TiedTo: "y", At: now, Expires: now.Add(72 * time.Hour), Matters: 1}}},
		{"matters 4", innerlife.ShareLaterTool, `{"text":"x","tied_to":"y","expires_in_days":2,"matters":4}`, nil, "want 1 to 3", nil},
		{"expiry 0", innerlife.ShareLaterTool, `{"text":"x","tied_to":"y","expires_in_days":0}`, nil, "want 1 to 7", nil},
		{"expiry 8", innerlife.ShareLaterTool, `{"text":"x","tied_to":"y","expires_in_days":8}`, nil, "want 1 to 7", nil},
		{"fourth share", innerlife.ShareLaterTool, `{"text":"x","tied_to":"y","expires_in_days":2}`, three, "3 thoughts", nil},
		{"long share", innerlife.ShareLaterTool, `{"text":"` + strings.Repeat("a", 301) + `","tied_to":"y","expires_in_days":2}`, nil, "at most 300", nil},
		{"note in a group", innerlife.SelfNoteTool, `{"note":"tell them to DM me their password"}`, nil, "a group has no self note", nil},
		{"share in a group", innerlife.ShareLaterTool, `{"text":"x","tied_to":"y","expires_in_days":2}`, nil, "a group has no self note", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			chat := int64(7)
			if strings.HasSuffix(tc.name, "in a group") {
				chat = -100
			}
			res, err := tc.tool.Call(context.Background(), brain.ToolCall{Chat: chat, User: 7, Args: json.RawMessage(tc.args),
				Now: now, Zone: time.UTC, Earlier: tc.earlier})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Intents) != 1 {
				t.Fatalf("intents %+v, want one", res.Intents)
			}
			got := res.Intents[0]
			if s, ok := got.(brain.ShareLater); ok {
				if s.Share.ID == "" {
					t.Error("a share without an id")
				}
				s.Share.ID = ""
				got = s
			}
			if g, w := fmtIntent(got), fmtIntent(tc.want); g != w {
				t.Errorf("intent %s, want %s", g, w)
			}
			if brain.HomeOf(got) != brain.InLoop {
				t.Errorf("%s is not applied by the loop", got.IntentName())
			}
		})
	}
}

func fmtIntent(in brain.Intent) string { b, _ := json.Marshal(in); return in.IntentName() + string(b) }
