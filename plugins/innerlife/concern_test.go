package innerlife_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// apply applies the plugin's changes among ins to b, as a committed turn at at.
func apply(t *testing.T, p *innerlife.Plugin, b pluginstest.Bucket, at time.Time, ins ...brain.Intent) {
	t.Helper()
	for _, in := range ins {
		if c, ok := in.(brain.PluginChange); ok {
			if err := p.Apply(b, c, at); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func newPlugin(t *testing.T, start time.Time) (*innerlife.Plugin, pluginstest.Bucket) {
	p, b, _ := newPluginReg(t, start)
	return p, b
}

func newPluginReg(t *testing.T, start time.Time) (*innerlife.Plugin, pluginstest.Bucket, *prometheus.Registry) {
	t.Helper()
	p, _, reg := newPluginAt(start)
	return p, pluginstest.Bucket{}, reg
}

// newPluginAt is newPluginOn a manual clock set at start.
func newPluginAt(start time.Time) (*innerlife.Plugin, *braintest.Clock, *prometheus.Registry) {
	clock := braintest.NewClock(start)
	p, reg := newPluginOn(clock)
	return p, clock, reg
}

// newPluginOn is a plugin with the default configuration on clock, measured into a
// registry of its own, which it returns.
func newPluginOn(clock *braintest.Clock) (*innerlife.Plugin, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return innerlife.New(innerlife.Config{}, innerlife.Options{Clock: clock, Registerer: reg}), reg
}

// checkinWake is the proactive wake of chat 7 for its due check-in.
func checkinWake(at time.Time) brain.Wake {
	return brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileProactive, Gated: true, At: at,
		Reason: brain.Reason{Code: brain.ReasonConcernCheckin}, Rel: brain.Relationship{Chat: 7, User: 7}}
}

// TestCheckinRaisedAgainAfterAFailedRun: a check-in whose proactive run failed (nothing
// committed) is raised again in the same process; while it waits in the state as a gated
// thought, or a run carrying it may still be going, nothing more is raised; once a run
// that showed it commits, it is never raised again.
func TestCheckinRaisedAgainAfterAFailedRun(t *testing.T) {
	t.Parallel()
	due := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b, reg := newPluginReg(t, due)
	apply(t, p, b, due.Add(-time.Hour), innerlife.OpenConcernChange(7, "c1", due))
	n := p.Neurons()[0]
	held := &brain.State{Thoughts: []brain.Thought{{Chat: 7, Gated: true, Ref: "c1", Reason: brain.ReasonConcernCheckin}}}
	empty := &brain.State{}

	check := func(at time.Time, st *brain.State) bool {
		t.Helper()
		sig, ok := n.Check(at, st)
		if ok && (sig.Ref != "c1" || sig.Detail != brain.ReasonConcernCheckin || sig.Chat != 7) {
			t.Fatalf("signal %+v", sig)
		}
		return ok
	}
	steps := []struct {
		at    time.Duration
		st    *brain.State
		raise bool
		why   string
	}{
		{-time.Second, empty, false, "not due yet"},
		{0, empty, true, "due"},
		{time.Second, empty, false, "just raised"},
		{innerlife.RecheckAfter, held, false, "a gate holds it: it waits as a gated thought"},
		{2 * innerlife.RecheckAfter, empty, true, "its run failed: raised again"},
	}
	for _, s := range steps {
		if got := check(due.Add(s.at), s.st); got != s.raise {
			t.Fatalf("at +%v (%s): raised %v, want %v", s.at, s.why, got, s.raise)
		}
	}
	// A run shows it, and fails; the recheck within RecheckAfter of the run leaves it.
	shownAt := due.Add(2*innerlife.RecheckAfter + time.Minute)
	if sec := p.Context(checkinWake(shownAt), shownAt); len(sec.Intents) != 1 {
		t.Fatalf("the check-in run carries %d intents, want the check-in", len(sec.Intents))
	}
	if check(due.Add(3*innerlife.RecheckAfter), empty) {
		t.Fatal("raised while the run that carried it may still be going")
	}
	if !check(due.Add(4*innerlife.RecheckAfter), empty) {
		t.Fatal("not raised again after the run that carried it failed")
	}
	// This time the run commits (silently: the model chose not to write). It counts as asked.
	at := due.Add(4*innerlife.RecheckAfter + time.Minute)
	apply(t, p, b, at, p.Context(checkinWake(at), at).Intents...)
	for i := 5; i < 10; i++ {
		if check(due.Add(time.Duration(i)*innerlife.RecheckAfter), empty) {
			t.Fatalf("a check-in asked (by a silent run) was raised again at +%v", time.Duration(i)*innerlife.RecheckAfter)
		}
	}
	for attempt, want := range map[string]float64{"first": 1, "again": 2} {
		if got := pluginstest.Value(t, reg, "anima_innerlife_checkins_raised_total", "attempt", attempt); got != want {
			t.Errorf("check-ins raised (%s) = %v, want %v", attempt, got, want)
		}
	}
	if got := pluginstest.Value(t, reg, "anima_innerlife_checkins_asked_total", "how", "proactive"); got != 1 {
		t.Errorf("check-ins asked (proactive) = %v, want 1", got)
	}
	later := due.Add(time.Hour * 3)
	if sec := p.Context(checkinWake(later), later); strings.Contains(strings.Join(sec.Lines, "\n"), "due check-in") || len(sec.Intents) != 0 {
		t.Errorf("an asked check-in is still shown as due: %q", sec.Lines)
	}
	if s := p.Status(7, 7, later, time.UTC); strings.Contains(s, "Next check-in") {
		t.Errorf("/status still lists an asked check-in:\n%s", s)
	}
}

func journalCall(t *testing.T, p *innerlife.Plugin, at time.Time, text string) (brain.ToolResult, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"kind": "observation", "text": text})
	return p.Tools()[1].Call(context.Background(), brain.ToolCall{Chat: 7, User: 7, Args: args, Now: at})
}

// TestJournalSlotTakenAtCommit: the 5-minute journal slot is taken when a turn commits; a
// second entry in the same run is refused; a run that failed leaves the slot free for the
// next run; two entries committed within 5 minutes (a dream's and a chat run's) keep one.
func TestJournalSlotTakenAtCommit(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b := newPlugin(t, at)
	run := func(at time.Time) { p.Context(brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileChat, At: at}, at) }

	run(at)
	if _, err := journalCall(t, p, at, "first, in a run that fails"); err != nil {
		t.Fatal(err)
	}
	if _, err := journalCall(t, p, at.Add(time.Second), "second in the same run"); err == nil || !strings.Contains(err.Error(), "5 minutes") {
		t.Fatalf("a second entry in one run: %v, want refused", err)
	}
	// The run failed: nothing committed. The turn runs again a minute later.
	retry := at.Add(time.Minute)
	run(retry)
	res, err := journalCall(t, p, retry, "written by the retried turn")
	if err != nil {
		t.Fatalf("the retried turn was refused its entry: %v", err)
	}
	apply(t, p, b, retry, res.Intents...)
	next := retry.Add(2 * time.Minute)
	run(next)
	if _, err := journalCall(t, p, next, "too soon"); err == nil {
		t.Fatal("an entry 2 minutes after a committed one was accepted")
	}
	later := retry.Add(innerlife.JournalEvery)
	run(later)
	res, err = journalCall(t, p, later, "five minutes later")
	if err != nil {
		t.Fatalf("an entry 5 minutes after the last was refused: %v", err)
	}
	// Meanwhile a dream's entry committed first: the chat run's entry is dropped at commit.
	dream := innerlife.EntryChange(7, "the dream's digest", later.Add(time.Second))
	apply(t, p, b, later, dream)
	apply(t, p, b, later, res.Intents...)
	out, _ := p.Command(7, 7, "/thoughts", "", later, time.UTC)
	if strings.Contains(out, "five minutes later") || !strings.Contains(out, "the dream's digest") || !strings.Contains(out, "written by the retried turn") {
		t.Errorf("/thoughts after two entries committed within 5 minutes:\n%s", out)
	}
}

// chatRun is one committed run of chat 7 at at: Context starts it, then each tool call
// sees the intents of the calls before it (ToolCall.Earlier), and the run commits them
// all. It returns the errors the tools gave the model.
func chatRun(t *testing.T, p *innerlife.Plugin, b pluginstest.Bucket, at time.Time, tool brain.Tool, args ...string) []error {
	t.Helper()
	p.Context(brain.Wake{Chat: 7, User: 7, Profile: brain.ProfileChat, At: at, Rel: brain.Relationship{Chat: 7, User: 7}}, at)
	var earlier []brain.Intent
	var errs []error
	for _, a := range args {
		res, err := tool.Call(context.Background(), brain.ToolCall{Chat: 7, User: 7, Args: json.RawMessage(a), Now: at, Earlier: earlier})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		earlier = append(earlier, res.Intents...)
	}
	apply(t, p, b, at, earlier...)
	return errs
}

func openArgs(i int, checkIn time.Time) string {
	return fmt.Sprintf(`{"action":"open","id":null,"summary":"thing %d","kind":"event","check_in_at":%q,"note":null}`,
		i, checkIn.Format(time.RFC3339))
}

// TestConcernCaps (issue 16): runs that each try to open 12 concerns open at most
// MaxOpenedPerRun each, and a user never has more than MaxOpenConcerns that are not
// dormant; the tool tells the model why it refused.
func TestConcernCaps(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b, reg := newPluginReg(t, at)
	var refusals []string
	for run := range 10 {
		args := make([]string, 12)
		for i := range args {
			args[i] = openArgs(run*12+i, at.Add(48*time.Hour))
		}
		for _, err := range chatRun(t, p, b, at.Add(time.Duration(run)*time.Minute), p.Tools()[0], args...) {
			refusals = append(refusals, err.Error())
		}
	}
	if got := pluginstest.Value(t, reg, "anima_innerlife_concerns", "salience", "active"); got != innerlife.MaxOpenConcerns {
		t.Errorf("10 runs trying to open 12 concerns each left %v open, want %d", got, innerlife.MaxOpenConcerns)
	}
	joined := strings.Join(refusals, "\n")
	for _, want := range []string{fmt.Sprintf("at most %d concerns may be opened in one run", innerlife.MaxOpenedPerRun),
		fmt.Sprintf("you already follow %d concerns", innerlife.MaxOpenConcerns)} {
		if !strings.Contains(joined, want) {
			t.Errorf("no refusal says %q; refusals:\n%s", want, joined)
		}
	}
	// A concern gone dormant no longer counts: one more may be opened.
	later := at.Add(innerlife.ToDormant + time.Hour)
	if errs := chatRun(t, p, b, later, p.Tools()[0], openArgs(999, later.Add(time.Hour))); len(errs) != 0 {
		t.Errorf("opening a concern once the others are dormant: %v", errs)
	}
}

// TestDueCheckinsBeyondThePromptStayDue (issue 16): of 20 due check-ins, a prompt shows
// and carries a few; only those count as asked when the run commits, the rest stay due and
// come in later runs, each exactly once.
func TestDueCheckinsBeyondThePromptStayDue(t *testing.T) {
	t.Parallel()
	due := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b, reg := newPluginReg(t, due)
	for i := range 20 {
		apply(t, p, b, due.Add(-time.Hour), innerlife.OpenConcernChange(7, fmt.Sprintf("c%02d", i), due.Add(time.Duration(i)*time.Second)))
	}
	asked := map[string]int{}
	for run := range 10 {
		at := due.Add(time.Hour + time.Duration(run)*time.Minute)
		sec := p.Context(checkinWake(at), at)
		var shown []string
		for _, l := range sec.Lines {
			if strings.HasPrefix(l, "due check-in: ") {
				shown = append(shown, l)
			}
		}
		if len(shown) != len(sec.Intents) || len(shown) > 3 {
			t.Fatalf("run %d shows %d due check-ins and carries %d: a check-in counts as asked only if shown", run, len(shown), len(sec.Intents))
		}
		if len(sec.Lines) > 0 && len(shown) > 0 && !strings.HasPrefix(sec.Lines[0], "due check-in: ") {
			t.Errorf("run %d: the due check-ins are not the section's first lines (the budget cuts the last first)", run)
		}
		for _, l := range shown {
			asked[strings.TrimPrefix(strings.SplitN(l, " (", 2)[0], "due check-in: ")]++
		}
		apply(t, p, b, at, sec.Intents...)
	}
	if len(asked) != 20 {
		t.Errorf("10 runs asked %d distinct check-ins, want all 20", len(asked))
	}
	for s, n := range asked {
		if n != 1 {
			t.Errorf("check-in %q shown %d times", s, n)
		}
	}
	if got := pluginstest.Value(t, reg, "anima_innerlife_checkins_asked_total", "how", "proactive"); got != 20 {
		t.Errorf("check-ins asked = %v, want 20", got)
	}
}

// TestJournalCappedPerDay (issue 16): at most DefaultJournalPerDay entries in any 24
// hours for one user in one chat, whatever the 5-minute spacing allows; the tool says why.
func TestJournalCappedPerDay(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b := newPlugin(t, at)
	written := 0
	var refusal string
	for i := range 30 {
		errs := chatRun(t, p, b, at.Add(time.Duration(i)*6*time.Minute), p.Tools()[1],
			fmt.Sprintf(`{"kind":"observation","text":"entry %d"}`, i))
		if len(errs) == 0 {
			written++
		} else {
			refusal = errs[0].Error()
		}
	}
	if written != innerlife.DefaultJournalPerDay {
		t.Errorf("30 runs 6 minutes apart wrote %d entries, want %d", written, innerlife.DefaultJournalPerDay)
	}
	if !strings.Contains(refusal, "in the last 24 hours") {
		t.Errorf("refusal %q does not say why", refusal)
	}
	if errs := chatRun(t, p, b, at.Add(24*time.Hour), p.Tools()[1], `{"kind":"observation","text":"a new day"}`); len(errs) != 0 {
		t.Errorf("an entry 24 hours after the first was refused: %v", errs)
	}
}

// TestOneDreamPer20HoursWhateverTheZone (issue 16): a user who moves their /timezone an
// hour west every hour (and writes every hour) brings dream_at round every hour; the chat
// still dreams once in those 13 hours.
func TestOneDreamPer20HoursWhateverTheZone(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 3, 3, 4, 0, 0, 0, time.UTC) // 04:00 in Etc/GMT+0
	p, clock, _ := newPluginAt(start.Add(-40 * time.Minute))
	set, err := plugins.Install(nopRegistry{}, plugins.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	h := &host{p: p, b: pluginstest.Bucket{}, rels: []brain.Relationship{{Chat: 7, User: 7}}}
	jobs := plugins.NewJobs(set, h, jobLog{}, time.UTC)
	for m := -40; m <= 13*60; m += 10 {
		now := start.Add(time.Duration(m) * time.Minute)
		if (m+30)%60 == 0 { // half an hour before the next hour: an hour further west, and a message
			h.mu.Lock()
			h.rels[0].Timezone = fmt.Sprintf("Etc/GMT+%d", (m+30)/60)
			h.rels[0].LastUserMsg, h.rels[0].LastAgentMsg = now.Add(-10*time.Minute), now.Add(-10*time.Minute)
			h.mu.Unlock()
		}
		clock.Set(now)
		jobs.Step(context.Background(), now)
	}
	if h.thinks != 1 {
		t.Errorf("13 hours of moving west an hour each hour gave %d dreams, want 1 (at most one per %v)", h.thinks, innerlife.DreamEvery)
	}
}

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

// TestStatusInWords (issue 17 item 5): /status names what anima follows and when it means
// to ask, in words relative to the user's zone; /status details has the date and time; a
// group member sees only their own.
func TestStatusInWords(t *testing.T) {
	t.Parallel()
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, auckland) // a Monday morning there
	p, b := newPlugin(t, now)
	checkIn := time.Date(2026, 3, 6, 19, 0, 0, 0, auckland)
	speak(t, p, b, p.Tools()[0], 7, 7, now, `{"action":"open","id":null,"summary":"your driving test on Friday","kind":"event",`+
		`"check_in_at":"`+checkIn.UTC().Format(time.RFC3339)+`","note":null}`)
	speak(t, p, b, p.Tools()[0], -5, 8, now, `{"action":"open","id":null,"summary":"member 8's move","kind":"event","check_in_at":null,"note":null}`)

	got := p.Status(7, 7, now, auckland)
	want := "I'm following: your driving test on Friday.\nI'd like to ask how it went — your driving test on Friday — on Friday evening, if the moment is right."
	if got != want {
		t.Errorf("/status:\n%s\nwant:\n%s", got, want)
	}
	if got := p.Status(7, 7, checkIn.Add(time.Hour), auckland); !strings.HasSuffix(got, "— when the moment is right.") {
		t.Errorf("/status once the check-in is due: %q", got)
	}
	details := p.StatusDetails(7, 7, now, auckland)
	if !strings.Contains(details, "Next check-in: your driving test on Friday, Fri 6 Mar 19:00") {
		t.Errorf("/status details lacks the check-in's local date and time:\n%s", details)
	}
	if got := p.Status(-5, 9, now, auckland); got != "" {
		t.Errorf("member 9's /status in the group shows %q; member 8's concern is not theirs", got)
	}
	if got := p.Status(-5, 8, now, auckland); !strings.Contains(got, "member 8's move") {
		t.Errorf("member 8's /status in the group lacks their own concern: %q", got)
	}
}

// TestStatusNamesFiveAndCountsTheRest: /status names the five latest touched active
// concerns and how many more there are; /status details names them all.
func TestStatusNamesFiveAndCountsTheRest(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	p, b := newPlugin(t, start)
	for i := range 7 { // touched 48 h before their check-ins: c6 latest
		checkIn := start.Add(48*time.Hour + time.Duration(i)*time.Minute)
		apply(t, p, b, start, innerlife.OpenConcernChange(7, fmt.Sprintf("c%d", i), checkIn))
	}
	now := start.Add(time.Hour)
	following, _, _ := strings.Cut(p.Status(7, 7, now, time.UTC), "\n")
	if want := "I'm following: concern c6; concern c5; concern c4; concern c3; concern c2; and 2 more."; following != want {
		t.Errorf("/status:\n%s\nwant:\n%s", following, want)
	}
	details, _, _ := strings.Cut(p.StatusDetails(7, 7, now, time.UTC), "\n")
	if want := "Things of yours I'm following: concern c6; concern c5; concern c4; concern c3; concern c2; concern c1; concern c0."; details != want {
		t.Errorf("/status details:\n%s\nwant:\n%s", details, want)
	}
}
