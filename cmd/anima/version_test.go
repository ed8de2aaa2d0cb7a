package main

import (
	"runtime/debug"
	"testing"
)

// TestBuildVersion: `anima version` said "dev" after a plain `go build`, though the build
// records its commit (issue 36).
func TestBuildVersion(t *testing.T) {
	vcs := func(mv string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Version: mv}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	const rev = "abcdef1234567890abcdef1234567890abcdef12"
	for _, tc := range []struct {
		name, v string
		bi      *debug.BuildInfo
		want    string
	}{
		{"ldflags win", "v1.4.0", vcs("(devel)", "vcs.revision", rev), "v1.4.0"},
		{"plain go build", "dev", vcs("(devel)", "vcs.revision", rev, "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "false"), "v0.0.0-20250102030405-abcdef123456"},
		{"uncommitted changes", "dev", vcs("(devel)", "vcs.revision", rev, "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "true"), "v0.0.0-20250102030405-abcdef123456+dirty"},
		{"go install @version", "dev", vcs("v1.3.0"), "v1.3.0"},
		{"no VCS stamp", "dev", vcs("(devel)"), "dev"},
		{"no build info", "dev", nil, "dev"},
	} {
		if got := buildVersion(tc.v, tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
