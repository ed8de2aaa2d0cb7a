package brain_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

func TestRecordOpenerKeepsTheNewestAndNeverWritesInPlace(t *testing.T) {
	var r brain.Relationship
	for i := range brain.LedgerSize + 3 {
		r.RecordOpener(brain.Opener{Kind: brain.OpenerMissingYou, Topic: fmt.Sprintf("t%d", i), At: t0.Add(time.Duration(i) * time.Hour)})
	}
	if len(r.Openers) != brain.LedgerSize {
		t.Fatalf("kept %d openers, want %d", len(r.Openers), brain.LedgerSize)
	}
	if first, last := r.Openers[0].Topic, r.Openers[len(r.Openers)-1].Topic; first != "t3" || last != "t12" {
		t.Errorf("kept %s … %s, want t3 … t12 (the newest, oldest first)", first, last)
	}
	snapshot := r // a wake's copy
	before := slices.Clone(snapshot.Openers)
	r.RecordOpener(brain.Opener{Kind: brain.OpenerCheckin, At: t0.Add(20 * time.Hour)})
	r.MarkUserMessage(t0.Add(21 * time.Hour))
	if !slices.Equal(snapshot.Openers, before) {
		t.Error("the copy's ledger changed with the relationship's")
	}
	r.RecordOpener(brain.Opener{Kind: brain.OpenerThought, Topic: "  a\nvery " + strings.Repeat("long ", 30) + "topic"})
	if got := r.Openers[len(r.Openers)-1].Topic; strings.Contains(got, "\n") || len([]rune(got)) > brain.TopicRunes {
		t.Errorf("topic %q not cleaned to one line of at most %d runes", got, brain.TopicRunes)
	}
}

func TestMarkUserMessageAnswersOpeners(t *testing.T) {
	var r brain.Relationship
	r.RecordOpener(brain.Opener{Kind: brain.OpenerMissingYou, At: t0})
	r.MarkUserMessage(t0.Add(40 * time.Minute))
	r.RecordOpener(brain.Opener{Kind: brain.OpenerThought, At: t0.Add(24 * time.Hour)})
	r.RecordOpener(brain.Opener{Kind: brain.OpenerFollowup, At: t0.Add(28 * time.Hour)})
	r.MarkUserMessage(t0.Add(27 * time.Hour)) // between the two: the later one stays open
	want := []time.Time{t0.Add(40 * time.Minute), t0.Add(27 * time.Hour), {}}
	for i, o := range r.Openers {
		if !o.Answered.Equal(want[i]) {
			t.Errorf("opener %d answered %v, want %v", i, o.Answered, want[i])
		}
	}
}

func TestOpenerKindOf(t *testing.T) {
	for _, tc := range []struct {
		code string
		kind brain.MessageKind
		want brain.OpenerKind
		ok   bool
	}{
		{brain.ReasonProactive, "", brain.OpenerMissingYou, true},
		{brain.ReasonConcernCheckin, "", brain.OpenerCheckin, true},
		{brain.ReasonFollowup, "", brain.OpenerFollowup, true},
		{brain.ReasonThought, "", brain.OpenerThought, true},
		{brain.ReasonSchedule, brain.KindFollowup, brain.OpenerFollowup, true},
		{brain.ReasonSchedule, brain.KindReminder, "", false},
		{brain.ReasonUserMessage, "", "", false},
	} {
		if got, ok := brain.OpenerKindOf(tc.code, tc.kind); got != tc.want || ok != tc.ok {
			t.Errorf("OpenerKindOf(%s, %s) = %q, %v; want %q, %v", tc.code, tc.kind, got, ok, tc.want, tc.ok)
		}
	}
}

func TestChooseTopic(t *testing.T) {
	interest := func(s string) brain.Topic { return brain.Topic{ID: "interest:" + s, Label: s, Kind: "interest"} }
	checkin := brain.Topic{ID: "checkin:c1", Label: "the driving test", Kind: "checkin", Due: true}
	about := func(subject, topic string) brain.Opener {
		return brain.Opener{Kind: brain.OpenerThought, Subject: subject, Topic: topic}
	}
	for _, tc := range []struct {
		name   string
		cands  []brain.Topic
		recent []brain.Opener
		want   string
		ok     bool
	}{
		{"the first candidate", []brain.Topic{interest("jazz"), interest("birds")}, nil, "interest:jazz", true},
		{"not one of the last five, by id", []brain.Topic{interest("jazz"), interest("birds")},
			[]brain.Opener{about("interest:jazz", "Coltrane")}, "interest:birds", true},
		{"not one of the last five, by the model's label", []brain.Topic{interest("jazz"), interest("birds")},
			[]brain.Opener{about("", "Jazz")}, "interest:birds", true},
		{"six openers ago is fine", []brain.Topic{interest("jazz"), interest("birds")},
			[]brain.Opener{about("interest:jazz", ""), about("", "a"), about("", "b"), about("", "c"), about("", "d"), about("", "e")},
			"interest:jazz", true},
		{"a due check-in first, even if recent", []brain.Topic{checkin, interest("jazz")},
			[]brain.Opener{about("checkin:c1", "the driving test")}, "checkin:c1", true},
		{"all used", []brain.Topic{interest("jazz")}, []brain.Opener{about("interest:jazz", "")}, "", false},
		{"no candidates", nil, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := brain.ChooseTopic(tc.cands, tc.recent)
			if got.ID != tc.want || ok != tc.ok {
				t.Errorf("ChooseTopic = %q, %v; want %q, %v", got.ID, ok, tc.want, tc.ok)
			}
		})
	}
}
