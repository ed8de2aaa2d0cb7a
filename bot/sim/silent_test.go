package sim

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anima-bot/anima/bot/config"
)

// silentConfig is the default configuration in Berlin, with proactive contact and the
// inner life on or off.
func silentConfig(proactive, innerlife bool) config.Config {
	cfg := config.Default()
	cfg.User.Timezone = "Europe/Berlin"
	cfg.Proactive.Enabled = proactive
	cfg.Plugins.Innerlife.Enabled = innerlife
	return cfg
}

func TestSimulateSilentWeek(t *testing.T) {
	t.Parallel()
	cfg := silentConfig(true, true)
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
}

// TestSimulateSilentDaysWithAPartOff: the inner life off, no dream is listed; proactive
// contact off, the one model call left in 24 silent hours is the night's dream (it sends
// nothing), and without the inner life there is none at all.
func TestSimulateSilentDaysWithAPartOff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		proactive, innerlife bool
		days                 int
		wakes                []string // what each listed wake says, in order; nil: any
	}{
		{"inner life off", true, false, 7, nil},
		{"proactive off", false, true, 1, []string{"04:00  dream:"}},
		{"both off", false, false, 1, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Silent(silentConfig(tc.proactive, tc.innerlife), tc.days)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.innerlife && slices.Max(res.Dreams) != 0 {
				t.Errorf("dreams per day %v with the inner life off, want none", res.Dreams)
			}
			if !tc.proactive && slices.Max(res.PerDay) != 0 {
				t.Errorf("proactive runs per day %v with proactive contact off, want none", res.PerDay)
			}
			if tc.wakes == nil {
				return
			}
			if len(res.Wakes) != len(tc.wakes) {
				t.Fatalf("wakes %q in %d silent day(s), want %d", res.Wakes, tc.days, len(tc.wakes))
			}
			for i, want := range tc.wakes {
				if !strings.Contains(res.Wakes[i], want) {
					t.Errorf("wake %d is %q, want %q", i, res.Wakes[i], want)
				}
			}
		})
	}
}
