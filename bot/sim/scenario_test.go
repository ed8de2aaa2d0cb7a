package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
)

func TestParseScenarioStrict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       string // in the error; "" means valid
	}{
		{"empty takes the defaults", "", ""},
		{"minimal", "name: x\nuser:\n  writes:\n    - at: \"09:00\"\n", ""},
		{"unknown top-level key", "name: x\ndayz: 3\n", "dayz"},
		{"unknown nested key", "user:\n  answer:\n    proactiv: 0.5\n", "proactiv"},
		{"unknown key in a list", "user:\n  writes:\n    - at: \"09:00\"\n      jiter: 5m\n", "jiter"},
		{"wrong type", "days: seven\n", "seven"},
		{"bad duration", "step: soon\n", "soon"},
		{"days out of range", "days: 400\n", "days"},
		{"bad start", "start: 2026-13-40\n", "start"},
		{"bad time of day", "user:\n  writes:\n    - at: \"25:00\"\n", "user.writes[0].at"},
		{"chance not a probability", "user:\n  writes:\n    - at: \"09:00\"\n      chance: 2\n", "user.writes[0].chance"},
		{"write day outside the run", "days: 3\nuser:\n  writes:\n    - at: \"09:00\"\n      days: [4]\n", "user.writes[0].days"},
		{"reply chance that never ends", "user:\n  answer:\n    reply: 1\n", "user.answer.reply"},
		{"delays reversed", "user:\n  answer:\n    min_delay: 1h\n    max_delay: 1m\n", "user.answer"},
		{"unknown zone", "user:\n  timezone: Mars/Olympus\n", "user.timezone"},
		{"block outside the run", "days: 2\nuser:\n  block: {day: 5, at: \"10:00\"}\n", "user.block.day"},
		{"unknown status", "model:\n  proactive_status: chatty\n", "model.proactive_status"},
		{"concern outside the run", "days: 2\nmodel:\n  concern: {day: 3, summary: x, check_in: 1h}\n", "model.concern.day"},
		{"concern without a summary", "model:\n  concern: {day: 1, check_in: 1h}\n", "model.concern.summary"},
		{"concern without a check-in", "model:\n  concern: {day: 1, summary: x}\n", "model.concern.check_in"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := ParseScenario([]byte(tc.yaml))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid scenario refused: %v", err)
				}
				if sc.Days != 7 || sc.Step.Std() != time.Minute || sc.Start != "2026-03-02" {
					t.Errorf("defaults not applied: %+v", sc)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error naming %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

// examples are the shipped scenarios.
func examples(t *testing.T) map[string]Scenario {
	t.Helper()
	paths, err := filepath.Glob("../../examples/sim/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no example scenarios: %v", err)
	}
	out := map[string]Scenario{}
	for _, p := range paths {
		sc, err := LoadScenario(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".yaml")] = sc
	}
	for _, want := range []string{"chatty", "never-answers", "night-owl", "shift-worker", "blocks", "evening-person"} {
		if _, ok := out[want]; !ok {
			t.Errorf("examples/sim/%s.yaml missing", want)
		}
	}
	return out
}

// simConfig is the default configuration with the user zone of config.yaml.
func simConfig() config.Config {
	cfg := config.Default()
	cfg.User.Timezone = "UTC"
	return cfg
}

// replays holds each shipped scenario's replay, run once for all the tests that read it
// (a replay is deterministic, TestScenarioDeterministic checks it, and the tests only read
// the timeline).
var replays sync.Map // name → *replay

type replay struct {
	once sync.Once
	tl   *timeline
	err  error
}

// runExample replays a shipped scenario (once per test binary) and returns its timeline,
// which the caller must not change.
func runExample(t *testing.T, name string) *timeline {
	t.Helper()
	v, _ := replays.LoadOrStore(name, &replay{})
	r := v.(*replay)
	r.once.Do(func() {
		began := time.Now()
		r.tl, r.err = runScenario(context.Background(), simConfig(), examples(t)[name], Options{})
		t.Logf("%s replayed in %v (wall clock)", name, time.Since(began).Round(time.Millisecond))
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.tl
}

func TestScenarioInvariants(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"chatty", "night-owl", "shift-worker", "never-answers", "blocks", "evening-person"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tl := runExample(t, name)
			asked, replies, user := 0, 0, 0
			for _, r := range tl.rows {
				for _, w := range r.wakes {
					if w == brain.ReasonUserMessage {
						asked++
					}
				}
				replies += r.msgs[msgReply]
				user += r.msgs[msgUser]
				if r.quiet && r.msgs[msgProactive]+r.msgs[msgFollowup] > 0 {
					t.Errorf("%s: anima wrote first inside quiet hours", r.at.In(tl.loc).Format(time.RFC3339))
				}
			}
			if user == 0 || asked == 0 || replies != asked {
				t.Errorf("%d user messages, %d user-message wakes, %d replies: want every wake answered once", user, asked, replies)
			}
		})
	}
}

// TestNeverAnsweringUserHabituates: each unanswered proactive message doubles the silence
// anima waits for, so the gaps between its messages grow.
func TestNeverAnsweringUserHabituates(t *testing.T) {
	t.Parallel()
	tl := runExample(t, "never-answers")
	var at []time.Time
	for _, r := range tl.rows {
		if r.msgs[msgProactive]+r.msgs[msgFollowup] > 0 {
			at = append(at, r.at)
		}
	}
	if len(at) < 3 {
		t.Fatalf("%d proactive messages in a week, want at least 3 to see the gaps", len(at))
	}
	// Habituation doubles the silence needed, counted in waking time (quiet hours add
	// nothing): the gaps are measured the same way.
	waking := brain.NewWaking(tl.pol.QuietHours, nil, tl.loc)
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, waking.Between(at[i-1], at[i]))
	}
	t.Logf("waking time between proactive messages: %v", gaps)
	for i := 1; i < len(gaps); i++ {
		if gaps[i] < gaps[i-1] {
			t.Errorf("gap %d (%v) shorter than the one before (%v): habituation failed", i, gaps[i], gaps[i-1])
		}
	}
	// The message after n unanswered ones waits min_silence × 2^n of waking time at least
	// (the first gap follows one unanswered message).
	for i, g := range gaps {
		if need := tl.pol.MinSilence << (i + 1); g < need {
			t.Errorf("gap %d is %v of waking time, want at least %v (min_silence × 2^%d)", i, g, need, i+1)
		}
	}
}

// TestBlockedUserGetsNothing: after the user blocks the bot, nothing reaches them; the
// one message that discovers the block is refused and the relationship goes dormant.
func TestBlockedUserGetsNothing(t *testing.T) {
	t.Parallel()
	tl := runExample(t, "blocks")
	refused, wakesAfter, before := 0, 0, 0
	var refusedAt time.Time
	for _, r := range tl.rows {
		if !r.blocked {
			before += r.msgs[msgProactive] + r.msgs[msgReply]
			continue
		}
		for i, n := range r.msgs {
			if n > 0 {
				t.Errorf("%s: %d %s message(s) after the block", r.at.Format(time.RFC3339), n, msgNames[i])
			}
		}
		if !refusedAt.IsZero() {
			wakesAfter += len(r.wakes)
		}
		if r.refused > 0 && refusedAt.IsZero() {
			refusedAt = r.at
		}
		refused += r.refused
	}
	if before == 0 {
		t.Error("nothing was sent before the block: the scenario shows nothing")
	}
	if refused != 1 {
		t.Errorf("%d sends refused after the block, want exactly 1 (the one that finds it)", refused)
	}
	if wakesAfter != 0 {
		t.Errorf("%d wakes after the refused send, want 0: the relationship should be dormant", wakesAfter)
	}
}

// TestScenarioDeterministic: a second replay of the same scenario and seed, run beside
// the shared one, writes the same files; another seed writes another timeline.
func TestScenarioDeterministic(t *testing.T) {
	t.Parallel()
	sc := examples(t)["chatty"]
	other := sc
	other.Seed++
	// The two fresh replays run beside the shared one; each writes its own files.
	var csvs, summaries [3][]byte
	var errs [3]error
	read := func(i int, dir string) {
		csvs[i], _ = os.ReadFile(filepath.Join(dir, "timeline.csv"))
		summaries[i], _ = os.ReadFile(filepath.Join(dir, "summary.txt"))
	}
	var wg sync.WaitGroup
	for i, s := range []Scenario{sc, other} {
		dir := t.TempDir()
		wg.Go(func() {
			if _, errs[i+1] = Run(context.Background(), simConfig(), s, dir, Options{}); errs[i+1] == nil {
				read(i+1, dir)
			}
		})
	}
	dir := t.TempDir()
	if errs[0] = runExample(t, "chatty").write(dir, nil); errs[0] == nil {
		read(0, dir)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(csvs[0]) == 0 || len(summaries[0]) == 0 {
		t.Fatal("the shared replay wrote empty files")
	}
	if !bytes.Equal(csvs[0], csvs[1]) || !bytes.Equal(summaries[0], summaries[1]) {
		t.Error("two runs of the same scenario and seed differ")
	}
	if bytes.Equal(csvs[0], csvs[2]) {
		t.Error("another seed gives the same timeline: the seed is not used")
	}
}

// TestChattyWeekDreamsAndChecksIn: the inner life runs in the replay. The concern the
// model opens on day 2 comes back as a check-in wake, and the nightly dream runs only on
// nights after the user wrote, at most once a night, each a model call.
func TestChattyWeekDreamsAndChecksIn(t *testing.T) {
	t.Parallel()
	tl := runExample(t, "chatty")
	checkins, dreams, wroteSince := 0, 0, 0
	nights := map[int]int{}
	for _, r := range tl.rows {
		for _, w := range r.wakes {
			if w == brain.ReasonConcernCheckin {
				checkins++
			}
		}
		if r.dreams > 0 {
			if wroteSince == 0 {
				t.Errorf("%s: a dream though the user wrote nothing since the last one", r.at)
			}
			if r.modelCalls < r.dreams {
				t.Errorf("%s: %d dream(s) but %d model call(s)", r.at, r.dreams, r.modelCalls)
			}
			dreams += r.dreams
			nights[r.at.In(tl.loc).YearDay()] += r.dreams
			wroteSince = 0
		}
		wroteSince += r.msgs[msgUser]
	}
	for day, n := range nights {
		if n > 1 {
			t.Errorf("day %d of the year: %d dreams in one night", day, n)
		}
	}
	// The user writes every day; the dream after day 7 falls outside the run.
	if want := tl.sc.Days - 1; dreams != want {
		t.Errorf("%d dreams in a chatty week, want %d (one each night after the user wrote)", dreams, want)
	}
	if checkins != 1 {
		t.Errorf("%d concern check-in wakes, want 1 (the concern opened on day 2)", checkins)
	}
	res := tl.result()
	if sum(res.Dreams) != dreams || sum(res.Checkins) != checkins {
		t.Errorf("per-day table: %d dreams, %d check-ins; rows: %d, %d", sum(res.Dreams), sum(res.Checkins), dreams, checkins)
	}
}

// TestNeverAnsweringUserCostsAtMostOneDreamANight: with the inner life switched on, the
// never-answering scenario does what it does without it, plus at most one dream (one
// model call) on each night after the user wrote — here only the first.
func TestNeverAnsweringUserCostsAtMostOneDreamANight(t *testing.T) {
	t.Parallel()
	sc := examples(t)["never-answers"]
	off := simConfig()
	off.Plugins.Innerlife.Enabled = false
	base, err := runScenario(context.Background(), off, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl := runExample(t, "never-answers")
	bm, bw, bc, bs, bf, br, bd := base.totals()
	m, w, c, s, f, r, d := tl.totals()
	if bd != 0 {
		t.Errorf("%d dreams with the inner life off", bd)
	}
	if m != bm || w != bw || s != bs || f != bf || r != br {
		t.Errorf("with the inner life: msgs %v, wakes %d, silent %d, failed %d, refused %d; without: %v, %d, %d, %d, %d",
			m, w, s, f, r, bm, bw, bs, bf, br)
	}
	if c != bc+d {
		t.Errorf("%d model calls, want %d without the inner life plus %d dream(s)", c, bc, d)
	}
	wroteDays := map[int]bool{}
	for _, row := range tl.rows {
		if row.msgs[msgUser] > 0 {
			wroteDays[row.at.In(tl.loc).YearDay()] = true
		}
	}
	if d < 1 || d > len(wroteDays) {
		t.Errorf("%d dreams; want 1..%d (one per night after a day the user wrote)", d, len(wroteDays))
	}
	for _, row := range tl.rows {
		if row.dreams > 0 && !wroteDays[row.at.In(tl.loc).YearDay()-1] {
			t.Errorf("%s: a dream after a day the user did not write", row.at)
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
