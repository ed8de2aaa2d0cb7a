package bot

import (
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
	"github.com/anima-bot/anima/storage/storagetest"
)

// registered returns the name of every anima_ metric assembled anima registers, whether
// or not it has a series yet (a vector with no labels set exports nothing).
func registered(t *testing.T) []string {
	names, _ := registeredAndShown(t)
	return names
}

// registeredAndShown is registered, and of those the ones /metrics shows before anything
// happened (a series exists from the start); the others appear at their first use.
func registeredAndShown(t *testing.T) ([]string, map[string]bool) {
	t.Helper()
	cfg := config.Default()
	cfg.Telegram.Token = config.Secret(telegramtest.DefaultToken)
	cfg.Telegram.APIURL = "http://127.0.0.1:1"
	cfg.Telegram.AllowedUsers = []int64{1}
	cfg.LLM.APIKey = "test-key"
	cfg.Storage.Path = filepath.Join(t.TempDir(), "anima.db")
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.LLM.SpeechModel = "gpt-4o-mini-tts" // speech's metrics exist only with a speech model
	if !cfg.Plugins.Innerlife.Enabled {
		t.Fatal("the default configuration should enable the inner life, whose metrics are documented too")
	}
	store := storagetest.Open(t, cfg.Storage.Path)
	s, err := assemble(cfg, Options{}, store, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.ms.ln.Close()
		_ = s.ctl.ln.Close()
		_ = os.Remove(s.ctl.path)
	})
	descs := make(chan *prometheus.Desc)
	go func() {
		s.reg.Describe(descs)
		close(descs)
	}()
	// A Desc says its name only in its String: Desc{fqName: "anima_ticks_total", …}.
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		if strings.HasPrefix(m[1], "anima_") && !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	if len(names) < 20 {
		t.Fatalf("only %d anima metrics registered: %v", len(names), names)
	}
	families, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, f := range families {
		if len(f.GetMetric()) > 0 {
			shown[f.GetName()] = true
		}
	}
	return names, shown
}

// firstUse marks a docs/metrics.md row whose metric has no series until it is first used.
const firstUse = "*(after first use)*"

// TestMetricsDocumented fails when docs/metrics.md's table lacks a metric anima
// registers, or lists one it does not.
func TestMetricsDocumented(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	marked := map[string]bool{}
	row := regexp.MustCompile("^\\| `(anima_[a-z_]+)`")
	for line := range strings.Lines(string(raw)) {
		if m := row.FindStringSubmatch(line); m != nil {
			documented = append(documented, m[1])
			marked[m[1]] = strings.Contains(line, firstUse)
		}
	}
	names, shown := registeredAndShown(t)
	// A metric that /metrics does not show until it is first used says so (issue 36: an
	// operator looking for it on a fresh start found nothing and no word why).
	for _, n := range names {
		if slices.Contains(documented, n) && marked[n] == shown[n] {
			t.Errorf("docs/metrics.md: %s is shown from the start %v, marked %s %v", n, shown[n], firstUse, marked[n])
		}
	}
	for _, n := range names {
		if !slices.Contains(documented, n) {
			t.Errorf("docs/metrics.md's table lacks %s", n)
		}
	}
	for _, n := range documented {
		if !slices.Contains(names, n) {
			t.Errorf("docs/metrics.md's table lists %s, which anima does not register", n)
		}
	}
	t.Logf("%d metrics registered and documented", len(names))
}

// TestCommandsDocumented fails when docs/commands.md's table of the commands in the chat
// lacks a command anima understands, or lists one it does not (the README, kept short,
// names a few and links there).
func TestCommandsDocumented(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## In the chat\n")
	if !ok {
		t.Fatal("docs/commands.md has no ## In the chat section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var listed []string
	command := regexp.MustCompile("`/([a-z]+)")
	for line := range strings.Lines(section) {
		if cells := strings.Split(line, "|"); strings.HasPrefix(line, "| `/") && len(cells) > 2 {
			for _, m := range command.FindAllStringSubmatch(cells[1], -1) {
				listed = append(listed, m[1])
			}
		}
	}
	known := func(name string) bool {
		return slices.ContainsFunc(commandList, func(c struct{ name, args, about string }) bool { return c.name == name })
	}
	for _, c := range commandList {
		if !slices.Contains(listed, c.name) {
			t.Errorf("docs/commands.md's table of the commands in the chat lacks /%s", c.name)
		}
	}
	for _, name := range listed {
		if !known(name) {
			t.Errorf("docs/commands.md's table of the commands in the chat lists /%s, which anima does not understand", name)
		}
	}
}
