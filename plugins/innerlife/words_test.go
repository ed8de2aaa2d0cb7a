package innerlife_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/innerlife"
)

// bookkeeping is what prompt text must never carry outside the ids line: a hex id, an RFC
// 3339 time, a salience and kind in brackets.
var bookkeeping = regexp.MustCompile(`\b[0-9a-f]{8}\b|\d{4}-\d\d-\d\dT\d\d:\d\d|\((active|monitoring|background), `)

// TestConcernsInWords (issue 35): a concern opened on Tuesday evening about "my
// presentation at work tomorrow" is stored with its day (Wednesday) and reaches prompts
// as a person would say it — when it was mentioned, which day it is for, when anima asked —
// relative to each prompt's now: "for tomorrow" on Tuesday, "for Wednesday" two days
// after, never "tomorrow" for ever. No id, salience, kind or RFC 3339 time is in the text
// but on the one ids line; a due check-in is said once, not again among the concerns.
func TestConcernsInWords(t *testing.T) {
	t.Parallel()
	chicago, err := time.LoadLocation("America/Chicago")
	if err != nil {
		t.Fatal(err)
	}
	tue := time.Date(2026, 3, 10, 20, 30, 0, 0, chicago) // Tuesday evening
	p, b := newPlugin(t, tue)
	var tool brain.Tool
	for _, tl := range p.Tools() {
		if tl.Spec().Name == "innerlife_concern" {
			tool = tl
		}
	}
	res, err := tool.Call(context.Background(), brain.ToolCall{Chat: 7, User: 7, Now: tue, Zone: chicago, Args: json.RawMessage(
		`{"action":"open","id":null,"summary":"Mara's presentation at work tomorrow","kind":"event",` +
			`"check_in_at":"2026-03-11T18:00","on":null,"note":null}`)})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, b, tue, res.Intents...)
	wake := func(at time.Time) brain.Wake {
		w := checkinWake(at)
		w.Loc = chicago
		return w
	}
	lines := func(at time.Time) []string {
		sec := p.Context(wake(at), at)
		apply(t, p, b, at, sec.Intents...)
		for _, l := range sec.Lines {
			if !strings.HasPrefix(l, "ids for innerlife_concern") && bookkeeping.MatchString(l) {
				t.Errorf("at %s a prompt line carries bookkeeping: %q", at.Format("Mon 15:04"), l)
			}
		}
		return sec.Lines
	}
	for _, tc := range []struct {
		at         time.Time
		want, dont []string
	}{
		{tue.Add(30 * time.Minute), []string{"concern: Mara's presentation at work — mentioned 30 minutes ago, for tomorrow; you mean to ask how it went tomorrow evening",
			"ids for innerlife_concern (touch, close): Mara's presentation at work = "}, []string{"work tomorrow —"}},
		{time.Date(2026, 3, 11, 18, 30, 0, 0, chicago), []string{"due check-in: Mara's presentation at work (mentioned yesterday evening, for today; you meant to ask how it went 30 minutes ago)"},
			[]string{"concern: Mara"}},
		{time.Date(2026, 3, 13, 9, 0, 0, 0, chicago), []string{"concern: Mara's presentation at work — mentioned on Tuesday, for Wednesday; you asked how it went on Wednesday"},
			[]string{"due check-in", "tomorrow"}},
	} {
		got := strings.Join(lines(tc.at), "\n")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("at %s the section lacks %q:\n%s", tc.at.Format("Mon 15:04"), w, got)
			}
		}
		for _, d := range tc.dont {
			if strings.Contains(got, d) {
				t.Errorf("at %s the section has %q:\n%s", tc.at.Format("Mon 15:04"), d, got)
			}
		}
	}
}

// TestContextTopics (issue 35): the concerns reach a run as topics too, as data: an event
// of theirs is a topic on its day ("today", the nearest weighed most) and for two days
// after ("how did it go", another topic than wishing them well), not before, not after;
// an event whose check-in is planned is left to the check-in once its day is past.
func TestContextTopics(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	mon := time.Date(2026, 3, 9, 19, 0, 0, 0, berlin)
	p, b := newPlugin(t, mon)
	var tool brain.Tool
	for _, tl := range p.Tools() {
		if tl.Spec().Name == "innerlife_concern" {
			tool = tl
		}
	}
	open := func(args string) {
		res, err := tool.Call(context.Background(), brain.ToolCall{Chat: 7, User: 7, Now: mon, Zone: berlin, Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		apply(t, p, b, mon, res.Intents...)
	}
	open(`{"action":"open","id":null,"summary":"exam in statistics","kind":"event","check_in_at":null,"on":"wednesday","note":null}`)
	open(`{"action":"open","id":null,"summary":"dentist","kind":"event","check_in_at":"2026-03-11T19:00","on":"2026-03-11","note":null}`)
	topics := func(at time.Time) string {
		w := checkinWake(at)
		w.Loc = berlin
		var got []string
		for _, tp := range p.Context(w, at).Topics {
			if tp.Kind != brain.TopicEvent || !strings.HasPrefix(tp.ID, "event:") {
				t.Errorf("topic %+v: want an event", tp)
			}
			got = append(got, tp.Label+"|"+tp.On+"|"+tp.When+"|"+strconv.Itoa(tp.Weight)+"|"+strconv.FormatBool(strings.HasSuffix(tp.ID, ":after")))
		}
		return strings.Join(got, "; ")
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 3, 10, 9, 0, 0, 0, berlin), ""}, // the day before: not yet
		{time.Date(2026, 3, 11, 8, 0, 0, 0, berlin), "exam in statistics|2026-03-11|today|3|false; dentist|2026-03-11|today|3|false"},
		{time.Date(2026, 3, 12, 8, 0, 0, 0, berlin), "exam in statistics|2026-03-11|yesterday|2|true"},
		{time.Date(2026, 3, 13, 20, 0, 0, 0, berlin), "exam in statistics|2026-03-11|on Wednesday|1|true"},
		{time.Date(2026, 3, 14, 20, 0, 0, 0, berlin), ""}, // long past
	} {
		if got := topics(tc.at); got != tc.want {
			t.Errorf("at %s topics = %q, want %q", tc.at.Format("Mon 15:04"), got, tc.want)
		}
	}
}

// TestAnchorSpans (issue 35): a week, a weekend or a month named relative to when it was
// said is kept as the span it named, so "sister Ada visiting next week" said on Wednesday
// 11 March is not still "next week" a week later; day words become the concern's day.
func TestAnchorSpans(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	wed := time.Date(2026, 3, 11, 21, 0, 0, 0, berlin)
	sun := time.Date(2026, 3, 15, 10, 0, 0, 0, berlin)
	for _, tc := range []struct {
		said     string
		at       time.Time
		want, on string
	}{
		{"sister Ada visiting next week", wed, "sister Ada visiting the week of 16 March", ""},
		{"moving flat this week", wed, "moving flat the week of 9 March", ""},
		{"hiking this weekend", wed, "hiking the weekend of 14 March", ""},
		{"hiking this weekend", sun, "hiking the weekend of 14 March", ""},
		{"Next weekend: the wedding", wed, "the weekend of 21 March: the wedding", ""},
		{"new job starts next month", wed, "new job starts in April", ""},
		{"dentist tomorrow", wed, "dentist", "2026-03-12"},
		{"a weekly class", wed, "a weekly class", ""},
	} {
		got, on := innerlife.AnchorDay(tc.said, tc.at, berlin)
		if got != tc.want || on != tc.on {
			t.Errorf("%q said %s: %q for %q, want %q for %q", tc.said, tc.at.Format("Mon 2 Jan"), got, on, tc.want, tc.on)
		}
	}
}
