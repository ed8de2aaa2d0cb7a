package config

import (
	"fmt"
	"iter"
	"reflect"

	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/setting"
)

// section is what a plugin's own section type (a field of PluginsConfig) offers.
type section interface {
	// SetDefaults sets every key to its default, before the file is decoded over them.
	SetDefaults()
	// Validate adds to p a problem for each bad key; key is the section's full key
	// (plugins.<name>).
	Validate(p *setting.Checker, key string)
	// Plugin is the plugin built from the section, nil when it is switched off.
	Plugin(env plugins.Env) plugins.Plugin
}

// Installed are the built-in plugins switched on in c, in field order: the one list of
// the plugins compiled into anima is PluginsConfig's fields, so a new plugin adds its
// field there and nothing else outside its package.
func (c *PluginsConfig) Installed(env plugins.Env) []plugins.Plugin {
	var ps []plugins.Plugin
	for _, s := range c.sections() {
		if p := s.Plugin(env); p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// sections yields each plugin's section of c with its full key, in field order. A field
// whose type is not a section is a programming error: it panics (in every test).
func (c *PluginsConfig) sections() iter.Seq2[string, section] {
	return func(yield func(string, section) bool) {
		v := reflect.ValueOf(c).Elem()
		for f := range v.Type().Fields() {
			s, ok := v.FieldByIndex(f.Index).Addr().Interface().(section)
			if !ok {
				panic(fmt.Sprintf("config: plugins.%s (%s) has no SetDefaults, Validate and Plugin", yamlName(f), f.Type))
			}
			if !yield("plugins."+yamlName(f), s) {
				return
			}
		}
	}
}
