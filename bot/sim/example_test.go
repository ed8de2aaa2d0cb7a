package sim_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/sim"
	"github.com/anima-bot/anima/bot/sim/plot"
)

// TestExampleScenarios writes every shipped scenario's replay (the one the package's
// tests share) as Run writes it and checks the three files (the picture drawn by
// bot/sim/plot, as anima-sim draws it) and the rules every run keeps: each user message
// answered once, nothing proactive in quiet hours, at most max_per_day proactive wakes a
// day.
func TestExampleScenarios(t *testing.T) {
	t.Parallel()
	for name, sc := range sim.Examples(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := sim.SimConfig()
			dir := t.TempDir()
			res := sim.WriteExample(t, name, dir, plot.Draw)
			for _, f := range []string{"timeline.csv", "timeline.png", "summary.txt"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if len(b) == 0 {
					t.Errorf("%s is empty", f)
				}
			}
			png, _ := os.ReadFile(filepath.Join(dir, "timeline.png"))
			if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Error("timeline.png is not a PNG")
			}
			summary, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
			if !strings.Contains(string(summary), "repeats within 5 openers: 0 (target 0)") {
				t.Errorf("an opener repeats a topic of the last five:\n%s", summary)
			}
			if !strings.Contains(string(summary), "day 7: ") || !strings.Contains(string(summary), "total: ") {
				t.Errorf("summary.txt lacks the per-day table:\n%s", summary)
			}
			f, _ := os.Open(filepath.Join(dir, "timeline.csv"))
			defer f.Close()
			recs, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			// The run's local days, a daylight saving change among them (parent's Chicago
			// springs forward on its first Sunday).
			loc, err := time.LoadLocation(sc.User.Timezone)
			if err != nil || sc.User.Timezone == "" {
				loc = time.UTC
			}
			day, _ := time.Parse(time.DateOnly, sc.Start)
			from := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
			if want := int(from.AddDate(0, 0, sc.Days).Sub(from).Minutes()) + 1; len(recs) != want {
				t.Errorf("timeline.csv has %d lines, want %d (a header and one per simulated minute)", len(recs), want)
			}
			for i, n := range res.PerDay {
				if n > cfg.Proactive.MaxPerDay {
					t.Errorf("day %d: %d proactive wakes, max_per_day is %d", i+1, n, cfg.Proactive.MaxPerDay)
				}
			}
		})
	}
}
