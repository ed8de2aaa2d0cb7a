package config

import "github.com/anima-bot/anima/plugins/setting"

// The schema's value types, the error naming a bad key and the collector of a
// validation's problems live in package setting, where the plugins' own sections (plugins.<name>,
// mcp) use them too.
type (
	// Secret is a string that is never printed; Reveal returns the value.
	Secret = setting.Secret
	// Duration is a time.Duration written in YAML as a Go duration string ("90s", "6h").
	Duration = setting.Duration
	// KeyError is one problem with one configuration key.
	KeyError = setting.KeyError

	checker = setting.Checker
)
