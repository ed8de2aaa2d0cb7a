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
	if got := metricValue(t, reg, "anima_innerlife_concerns", "salience", "active"); got != innerlife.MaxOpenConcerns {
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
	if got := metricValue(t, reg, "anima_innerlife_checkins_asked_total", "how", "proactive"); got != 20 {
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
	clock := braintest.NewClock(start.Add(-40 * time.Minute))
	p := innerlife.New(innerlife.Config{}, innerlife.Options{Clock: clock, Registerer: prometheus.NewRegistry()})
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
