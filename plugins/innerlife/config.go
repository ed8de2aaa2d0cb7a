package innerlife

import (
	"strings"
	"time"

	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/setting"
)

// Config is the plugin's section of the configuration, plugins.innerlife (decoded as
// strictly as the rest: an unknown key is an error naming it). New gives a zero field
// its default.
type Config struct {
	Enabled bool `yaml:"enabled"`
	// DreamAt is the local time "HH:MM" (user.timezone) of the nightly dream.
	DreamAt string `yaml:"dream_at"`
	// DreamMinQuiet is how long the user must have been quiet for a dream to run.
	DreamMinQuiet setting.Duration `yaml:"dream_min_quiet"`
	// JournalPerDay is the most journal entries about one user in one chat in any 24 h.
	JournalPerDay int `yaml:"journal_per_day"`
}

// Defaults of the section's keys.
const (
	DefaultDreamAt       = "04:00"
	DefaultDreamMinQuiet = 30 * time.Minute
)

// dreamParallel is how many dreams run at once.
const dreamParallel = 2

// SetDefaults sets every key to its default (the plugin is on), before the file is
// decoded over them.
func (c *Config) SetDefaults() {
	*c = Config{Enabled: true, DreamAt: DefaultDreamAt, DreamMinQuiet: setting.Duration(DefaultDreamMinQuiet), JournalPerDay: DefaultJournalPerDay}
}

// Validate adds to p a problem for each bad key; section is the section's full key
// (plugins.innerlife).
func (c Config) Validate(p *setting.Checker, section string) {
	if h, m, ok := strings.Cut(c.DreamAt, ":"); !ok || len(h) != 2 || len(m) != 2 || atoi2(h) > 23 || atoi2(m) > 59 {
		p.Add(section+".dream_at", "want a local time \"HH:MM\" such as \"04:00\"; got %q", c.DreamAt)
	}
	p.Positive(section+".dream_min_quiet", c.DreamMinQuiet)
	if c.JournalPerDay < 1 {
		p.Add(section+".journal_per_day", "must be at least 1; got %d", c.JournalPerDay)
	}
}

// Plugin returns the plugin configured by c, or nil when it is switched off.
func (c Config) Plugin(env plugins.Env) plugins.Plugin {
	if !c.Enabled {
		return nil
	}
	return New(c, Options{Logger: env.Logger, Registerer: env.Registerer, Clock: env.Clock})
}

// atoi2 reads two ASCII digits; 99 for anything else.
func atoi2(s string) int {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 99
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}
