package sim

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anima-bot/anima/bot/config"
)

func TestSimulateSilentWeek(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.User.Timezone = "Europe/Berlin"
	res, err := Silent(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Print(&out, res)
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
	// The inner life adds one dream, on the night after the one day the user wrote (anima's
	// own unanswered messages are not news), and no check-in (no concern was opened).
	if want := []int{0, 1, 0, 0, 0, 0, 0}; !slices.Equal(res.Dreams, want) {
		t.Errorf("dreams per day %v, want %v", res.Dreams, want)
	}
	if want := make([]int, 7); !slices.Equal(res.Checkins, want) {
		t.Errorf("check-ins per day %v, want none", res.Checkins)
	}
	if !strings.Contains(out.String(), "day 2: ") || !strings.Contains(out.String(), ", 1 dream(s)") ||
		!strings.Contains(out.String(), fmt.Sprintf("total: %d model calls over 7 silent days (0 check-in(s), 1 dream(s))", total+1)) {
		t.Errorf("the table does not show the dream:\n%s", out.String())
	}
	cfg.Plugins.Innerlife.Enabled = false
	if res, err := Silent(cfg, 7); err != nil || slices.Max(res.Dreams) != 0 {
		t.Errorf("inner life off: dreams %v (%v), want none", res.Dreams, err)
	}
	cfg.Plugins.Innerlife.Enabled = true

	cfg.Proactive.Enabled = false
	res, err = Silent(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	// With anima never writing first, the one model call left is the night's dream (it
	// sends nothing); without the inner life there is none at all.
	if len(res.Wakes) != 1 || !strings.Contains(res.Wakes[0], "04:00  dream:") || slices.Max(res.PerDay) != 0 {
		t.Errorf("proactive disabled: wakes %q in 24 silent hours, want only the dream", res.Wakes)
	}
	cfg.Plugins.Innerlife.Enabled = false
	res, err = Silent(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Wakes) != 0 {
		t.Errorf("proactive disabled: %d wakes in 24 silent hours, want 0 (zero LLM calls)", len(res.Wakes))
	}
}
