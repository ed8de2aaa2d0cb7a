package mcp

import (
	"time"

	"github.com/anima-bot/anima/plugins/setting"
)

// Limits bound what one server can make anima hold or do, whatever it sends
// (mcp.servers.<name>.limits). The defaults are far above what a normal server lists; a
// zero field takes its default.
type Limits struct {
	// Tools is how many of the server's tools (those the allow-list admits) are taken;
	// the rest are refused with one warning.
	Tools int `yaml:"tools"`
	// DescriptionBytes caps a tool's description; a longer one is cut, with a mark.
	DescriptionBytes int `yaml:"description_bytes"`
	// SchemaBytes caps a tool's input schema as JSON; a tool with a larger one is refused.
	SchemaBytes int `yaml:"schema_bytes"`
	// ListPages and ListBytes cap one listing: past either, nextCursor is not followed
	// and the tools listed so far are taken.
	ListPages int `yaml:"list_pages"`
	ListBytes int `yaml:"list_bytes"`
	// MessageBytes caps one HTTP response body or one SSE event from a url server (a
	// stdio server's frames are capped at 16 MiB by the SDK); past it the request fails.
	MessageBytes int `yaml:"message_bytes"`
	// RefreshEvery is the least time between two listings on tools/list_changed; the
	// notifications in between make one refresh at the end of it.
	RefreshEvery setting.Duration `yaml:"refresh_every"`
}

// The default limits: a normal server lists a dozen tools with descriptions under 1 KB,
// in one page of a few tens of KB, and changes its tools rarely.
const (
	defaultTools            = 64
	defaultDescriptionBytes = 4 << 10
	defaultSchemaBytes      = 32 << 10
	defaultListPages        = 16
	defaultListBytes        = 8 << 20
	defaultMessageBytes     = 4 << 20
	defaultRefreshEvery     = 5 * time.Second
)

// withDefaults returns l with each zero field set to its default.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Tools, defaultTools)
	def(&l.DescriptionBytes, defaultDescriptionBytes)
	def(&l.SchemaBytes, defaultSchemaBytes)
	def(&l.ListPages, defaultListPages)
	def(&l.ListBytes, defaultListBytes)
	def(&l.MessageBytes, defaultMessageBytes)
	if l.RefreshEvery <= 0 {
		l.RefreshEvery = setting.Duration(defaultRefreshEvery)
	}
	return l
}

// validate adds a problem for each negative limit; key is mcp.servers.<name>.limits.
func (l Limits) validate(p *setting.Checker, key string) {
	for _, f := range []struct {
		name string
		v    int
	}{{"tools", l.Tools}, {"description_bytes", l.DescriptionBytes}, {"schema_bytes", l.SchemaBytes},
		{"list_pages", l.ListPages}, {"list_bytes", l.ListBytes}, {"message_bytes", l.MessageBytes}} {
		if f.v < 0 {
			p.Add(key+"."+f.name, "must be 0 (the default) or more; got %d", f.v)
		}
	}
	if l.RefreshEvery < 0 {
		p.Add(key+".refresh_every", "must be 0 (the default, 5s) or a positive duration; got %s", l.RefreshEvery)
	}
}
