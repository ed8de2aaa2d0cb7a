package main

import (
	"runtime/debug"
	"strings"
	"time"
)

// buildVersion is the version of this anima: v as -ldflags set it (bot.Version), else,
// when it is "dev", what the build recorded: the module's version (go install …@v1.2.3),
// else the commit of a plain `go build` in a checkout, as a pseudo-version
// (v0.0.0-20250102030405-abcdef123456, +dirty for uncommitted changes); "dev" when the
// build recorded neither.
func buildVersion(v string, bi *debug.BuildInfo) string {
	if v != "dev" || bi == nil {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" && !strings.Contains(mv, "+dirty") {
		return mv
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	stamp := "00000000000000"
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		stamp = t.UTC().Format("20060102150405")
	}
	out := "v0.0.0-" + stamp + "-" + rev
	if dirty {
		out += "+dirty"
	}
	return out
}
