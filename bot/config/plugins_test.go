package config

import (
	"testing"

	"github.com/anima-bot/anima/plugins"
)

// TestInstalledFollowsEnabled: the built-in plugins installed are PluginsConfig's sections
// switched on, each built by its own package; switching one off leaves it out.
func TestInstalledFollowsEnabled(t *testing.T) {
	t.Parallel()
	c := Default()
	var names []string
	for _, p := range c.Plugins.Installed(plugins.Env{}) {
		names = append(names, p.Name())
	}
	if len(names) != 1 || names[0] != "innerlife" {
		t.Errorf("installed by default: %v, want [innerlife]", names)
	}
	c.Plugins.Innerlife.Enabled = false
	if ps := c.Plugins.Installed(plugins.Env{}); len(ps) != 0 {
		t.Errorf("%d plugins installed with every section off, want 0", len(ps))
	}
}
