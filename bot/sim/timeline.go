package sim

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Message columns of the timeline.
const (
	msgUser = iota
	msgReply
	msgProactive
	msgFollowup
	msgOther // reminders and system messages (apologies)
	msgKinds
)

var msgNames = [msgKinds]string{"user", "reply", "proactive", "followup", "other"}

// kindColumn is the timeline column of a message anima sent.
func kindColumn(k brain.MessageKind) int {
	switch k {
	case brain.KindReply:
		return msgReply
	case brain.KindProactive:
		return msgProactive
	case brain.KindFollowup:
		return msgFollowup
	}
	return msgOther
}

// simRow is one step of a scenario run for one chat.
type simRow struct {
	at         time.Time
	chat       int64
	pressure   float64  // social pressure after the step
	quiet      bool     // inside the quiet hours, in the user's zone
	blocked    bool     // the user has blocked the bot
	wakes      []string // reason codes of the wakes
	modelCalls int      // requests to the model endpoint, dreams' included
	dreams     int      // dream runs (the inner life's nightly job)
	msgs       [msgKinds]int
	checkin    int  // messages sent on concern check-in wakes (also counted in msgs)
	active     bool // inside the user's active hours as anima has learned them so far
	silent     int  // proactive runs that said nothing
	failed     int  // cognition runs that failed
	refused    int  // deliveries refused because the user blocked the bot
}

// timeline is what a scenario run did, step by step.
type timeline struct {
	sc    Scenario
	pol   brain.ProactivePolicy
	loc   *time.Location // the user's zone
	start time.Time
	rows  []simRow
	// wakeLines are the proactive wakes as Print lists them.
	wakeLines []string
	perDay    []int // proactive wakes (check-ins included) per local day
	checkins  []int // concern check-in wakes per local day
	dreams    []int // dream runs per local day
	// sends are the messages anima sent first; due the check-ins that came due (by
	// concern, the earliest time seen); prevWake the last proactive wake, for the
	// cooldown of the next one's trigger.
	sends    []simSend
	due      map[string]time.Time
	prevWake time.Time
	// carried are check-ins a chat run carried (the user wrote first), checkinWoken those
	// that had a wake of their own.
	carried      map[string]time.Time
	checkinWoken map[string]bool
	// openers are the messages anima sent first, with their briefs (openers.go).
	openers []opener
	// model names the live model ("" for the scripted one); requests and requestBytes
	// are what the model client sent over the whole run.
	model        string
	requests     int
	requestBytes int64
	// ledger is the messages anima wrote first with their topics (ledger.go).
	ledger []simOpener
	// sharedReplies are the replies that brought up a thought anima kept to share.
	sharedReplies []simOpener
	// own are the times the scenario's user writes of their own accord (friend.go).
	own []time.Time
}

func newTimeline(sc Scenario, pol brain.ProactivePolicy, loc *time.Location, start time.Time) *timeline {
	steps := int(time.Duration(sc.Days) * 24 * time.Hour / sc.Step.Std())
	return &timeline{sc: sc, pol: pol, loc: loc, start: start, rows: make([]simRow, 0, steps+2),
		perDay: make([]int, sc.Days), checkins: make([]int, sc.Days), dreams: make([]int, sc.Days), due: map[string]time.Time{},
		carried: map[string]time.Time{}, checkinWoken: map[string]bool{}}
}

// add starts the row of a step; the pointer is valid until the next add.
func (t *timeline) add(at time.Time, chat int64) *simRow {
	t.rows = append(t.rows, simRow{at: at, chat: chat, quiet: t.pol.Enabled && t.pol.QuietHours.Contains(at, t.loc)})
	return &t.rows[len(t.rows)-1]
}

// proactiveWake records a proactive, follow-up or check-in wake for the per-day table.
func (t *timeline) proactiveWake(at time.Time, r brain.Reason) {
	if d, ok := t.listed(at, r); ok {
		t.perDay[d]++
		if r.Code == brain.ReasonConcernCheckin {
			t.checkins[d]++
		}
	}
}

// dream records a dream run for the per-day table.
func (t *timeline) dream(at time.Time, r brain.Reason) {
	if d, ok := t.listed(at, r); ok {
		t.dreams[d]++
	}
}

// listed adds a wake line and returns the index of at's local day, if inside the run.
func (t *timeline) listed(at time.Time, r brain.Reason) (int, bool) {
	local := at.In(t.loc)
	t.wakeLines = append(t.wakeLines, fmt.Sprintf("%s  %s: %s", local.Format("Mon 02 Jan 15:04"), reasonWord(r.Code), r.Text))
	a := time.Date(t.start.Year(), t.start.Month(), t.start.Day(), 12, 0, 0, 0, time.UTC)
	b := time.Date(local.Year(), local.Month(), local.Day(), 12, 0, 0, 0, time.UTC)
	d := int(b.Sub(a).Hours() / 24)
	return d, d >= 0 && d < len(t.perDay)
}

// result is the run as Silent reports one: proactive wakes, check-ins and dreams per
// local day, listed.
func (t *timeline) result() Result {
	return Result{PerDay: append([]int(nil), t.perDay...), Checkins: append([]int(nil), t.checkins...),
		Dreams: append([]int(nil), t.dreams...), Wakes: append([]string(nil), t.wakeLines...)}
}

// totals sums the rows' message columns, wakes, model calls and refused sends.
func (t *timeline) totals() (msgs [msgKinds]int, wakes, calls, silent, failed, refused, dreams int) {
	for _, r := range t.rows {
		for i, n := range r.msgs {
			msgs[i] += n
		}
		wakes += len(r.wakes)
		calls += r.modelCalls
		silent += r.silent
		failed += r.failed
		refused += r.refused
		dreams += r.dreams
	}
	return msgs, wakes, calls, silent, failed, refused, dreams
}

// write writes timeline.csv, summary.txt and, drawn by draw (if not nil), timeline.png
// into dir.
func (t *timeline) write(dir string, draw Drawer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sim output: %w", err)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"timeline.csv", t.writeCSV},
		{"summary.txt", t.writeSummary},
		{"timeline.png", func(w io.Writer) error { return draw(w, t.picture()) }},
	} {
		if f.name == "timeline.png" && draw == nil {
			continue
		}
		if err := writeFile(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	return nil
}

// writeFile creates path and fills it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sim output: %w", err)
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// csvHeader names timeline.csv's columns.
var csvHeader = []string{"time", "chat", "social_pressure", "quiet_hours", "blocked", "wakes", "wake_reasons",
	"model_calls", "msgs_user", "msgs_reply", "msgs_proactive", "msgs_followup", "msgs_other",
	"silent_runs", "failed_runs", "refused_blocked", "checkins", "dreams"}

// writeCSV writes one line per step: the time in the user's zone, the chat, its social
// pressure, the wakes with their reasons, the model calls (dreams' included), the
// messages by kind, and the check-in wakes and dream runs.
func (t *timeline) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	b01 := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	itoa := strconv.Itoa
	for _, r := range t.rows {
		rec := []string{r.at.In(t.loc).Format(time.RFC3339), strconv.FormatInt(r.chat, 10),
			strconv.FormatFloat(r.pressure, 'f', 4, 64), b01(r.quiet), b01(r.blocked),
			itoa(len(r.wakes)), strings.Join(r.wakes, ";"), itoa(r.modelCalls)}
		for _, n := range r.msgs {
			rec = append(rec, itoa(n))
		}
		checkins := 0
		for _, w := range r.wakes {
			if w == brain.ReasonConcernCheckin {
				checkins++
			}
		}
		rec = append(rec, itoa(r.silent), itoa(r.failed), itoa(r.refused), itoa(checkins), itoa(r.dreams))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeSummary writes the per-day table of `anima sim` (Print), then the run's totals.
func (t *timeline) writeSummary(w io.Writer) error {
	name := t.sc.Name
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(w, "scenario %s: %d days from %s (random seed %d) in the user's time zone %s, the clock advancing %s a step\n",
		name, t.sc.Days, t.sc.Start, t.sc.Seed, t.loc, brain.Duration(t.sc.Step.Std()))
	if t.model != "" {
		fmt.Fprintf(w, "live model: %s\n", t.model)
	}
	fmt.Fprintln(w)
	printPerDay(w, t.result(), "simulated days")
	msgs, wakes, calls, silent, failed, refused, dreams := t.totals()
	fmt.Fprintf(w, "\nanima woke %d times (for a message, a reminder or a moment it might write first), dreamed %d times and sent the model %d requests; %d times it could have written first and chose silence, and %d runs failed\n",
		wakes, dreams, calls, silent, failed)
	fmt.Fprintf(w, "messages: %d from the user, %d replies from anima, %d anima wrote first (check-ins included), %d follow-up(s), %d other(s) (reminders, apologies)\n",
		msgs[msgUser], msgs[msgReply], msgs[msgProactive], msgs[msgFollowup], msgs[msgOther])
	fmt.Fprintf(w, "messages refused because the user had blocked the bot: %d\n", refused)
	t.measure().write(w, t.sc.Days, t.loc)
	t.writeLedger(w)
	t.friend().write(w)
	t.writeOpeners(w)
	return nil
}
