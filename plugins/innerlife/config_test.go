package innerlife_test

import (
	"testing"

	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/setting"
)

// TestConfigDefaultsAreValid: the defaults pass validation and build the plugin; a
// section switched off builds none; a bad key is named under the section's key.
func TestConfigDefaultsAreValid(t *testing.T) {
	t.Parallel()
	var c innerlife.Config
	c.SetDefaults()
	var p setting.Checker
	c.Validate(&p, "plugins.innerlife")
	if len(p) != 0 {
		t.Fatalf("the defaults are invalid: %v", p)
	}
	if pl := c.Plugin(plugins.Env{}); pl == nil || pl.Name() != innerlife.Name {
		t.Errorf("Plugin = %v, want the inner life", pl)
	}
	c.Enabled = false
	if pl := c.Plugin(plugins.Env{}); pl != nil {
		t.Errorf("switched off, Plugin = %v, want nil", pl)
	}
	c.JournalPerDay = 0
	c.Validate(&p, "plugins.innerlife")
	if len(p) != 1 || p[0].Key != "plugins.innerlife.journal_per_day" {
		t.Errorf("problems %v, want one for plugins.innerlife.journal_per_day", p)
	}
}
