package innerlife_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/innerlife"
)

// update rewrites the fixture: go test ./plugins/innerlife -run Fixture -update
var update = flag.Bool("update", false, "rewrite testdata/sections.json")

// fixtureSection is what a prompt reads of a Section (its intents are the plugin's own).
type fixtureSection struct {
	Title  string
	Lines  []string
	Topics []brain.Topic
}

// TestSectionsFixture writes (with -update) or checks testdata/sections.json: the sections
// this plugin's Context gives, for each profile, the golden prompts of brain/cognition
// (chat 42, Sam, Europe/Berlin, Friday 14 March 2025 10:30), so that those prompts carry
// real plugin output, not hand-written concern lines. Sam's driving test is today (a
// check-in planned for the evening), the dentist was yesterday, a sister visits next week;
// for the check-in run the driving test was yesterday and its check-in is due.
func TestSectionsFixture(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 14, 10, 30, 0, 0, berlin)
	wed := time.Date(2025, 3, 12, 20, 10, 0, 0, berlin)
	concerns := func(driving, checkIn string) []innerlife.Concern {
		at, _ := time.ParseInLocation("2006-01-02 15:04", checkIn, berlin)
		return []innerlife.Concern{
			{ID: "c3a1f09e", Summary: "driving test", Kind: "event", On: driving, CheckInAt: at, Created: wed, Touched: wed},
			{ID: "d41b2c77", Summary: "dentist appointment", Kind: "event", On: "2025-03-13", Created: wed.Add(-24 * time.Hour),
				Touched: wed.Add(-24 * time.Hour)},
			{ID: "5e0c9a12", Summary: "sister Ada visiting the week of 17 March", Kind: "wellbeing", Created: wed.Add(time.Hour),
				Touched: wed.Add(time.Hour)},
		}
	}
	section := func(profile brain.Profile, code string, cs []innerlife.Concern) fixtureSection {
		p, b := newPlugin(t, wed)
		for _, c := range cs {
			c.Chat, c.User = 42, 7
			apply(t, p, b, c.Created, innerlife.OpenChange(c))
		}
		w := brain.Wake{Chat: 42, User: 7, Profile: profile, Reason: brain.Reason{Code: code}, Loc: berlin, At: now,
			Rel: brain.Relationship{Chat: 42, User: 7, Name: "Sam", Timezone: "Europe/Berlin"}}
		if code == brain.ReasonUserMessage {
			w.Signals = []brain.Signal{{Type: brain.SignalUserMessage, Chat: 42, User: 7, Text: "hi", At: now}}
		}
		sec := p.Context(w, now)
		return fixtureSection{Title: sec.Title, Lines: sec.Lines, Topics: sec.Topics}
	}
	today := concerns("2025-03-14", "2025-03-14 18:00")
	got := map[string]fixtureSection{
		"chat":      section(brain.ProfileChat, brain.ReasonUserMessage, today),
		"proactive": section(brain.ProfileProactive, brain.ReasonProactive, today),
		"check-in":  section(brain.ProfileProactive, brain.ReasonConcernCheckin, concerns("2025-03-13", "2025-03-14 09:00")),
		"dream":     section(brain.ProfileDream, "dream", today),
	}
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	path := filepath.Join("testdata", "sections.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the fixture (run with -update to write it): %v", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("%s is not what Context gives now; rewrite it with -update and the golden prompts of brain/cognition "+
			"with theirs:\n%s", path, data)
	}
}
