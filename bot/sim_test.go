package bot_test

import (
	"bytes"
	"testing"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
)

func TestSimulateSilentWeek(t *testing.T) {
	cfg := config.Default()
	cfg.User.Timezone = "Europe/Berlin"
	res, err := bot.Simulate(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	bot.PrintSim(&out, res)
	t.Logf("defaults, a silent week:\n%s", out.String())
	total := 0
	for i, n := range res.PerDay {
		if n > cfg.Proactive.MaxPerDay {
			t.Errorf("day %d: %d proactive runs, max_per_day is %d", i+1, n, cfg.Proactive.MaxPerDay)
		}
		total += n
	}
	if total == 0 || total > 7 {
		t.Errorf("%d proactive runs in a silent week; habituation should keep it between 1 and 7", total)
	}
	if res.PerDay[6] > res.PerDay[0] {
		t.Errorf("day 7 has more runs (%d) than day 1 (%d): habituation failed", res.PerDay[6], res.PerDay[0])
	}

	cfg.Proactive.Enabled = false
	res, err = bot.Simulate(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Wakes) != 0 {
		t.Errorf("proactive disabled: %d wakes in 24 silent hours, want 0 (zero LLM calls)", len(res.Wakes))
	}
}
