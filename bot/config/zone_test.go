package config

import (
	"slices"
	"strings"
	"testing"
)

// TestSuggestZones: "Berlin" as user.timezone got no "did you mean Europe/Berlin?"
// (issue 26). The last element of the name is matched against the tz database's names,
// case-insensitively.
func TestSuggestZones(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"Berlin", []string{"Europe/Berlin"}},
		{"berlin", []string{"Europe/Berlin"}},
		{"Europa/BERLIN", []string{"Europe/Berlin"}},
		{"new york", []string{"America/New_York"}},
		{"salta", []string{"America/Argentina/Salta"}},
		{"utc", []string{"UTC"}},
		{"Olympus", nil},
		{"", nil},
		{"../etc/passwd", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SuggestZones(tc.name); !slices.Equal(got, tc.want) {
				t.Errorf("SuggestZones(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
	_, err := parse([]byte("user: {timezone: Berlin}\n"), noEnv)
	if err == nil || !strings.Contains(err.Error(), `line 1: user.timezone: unknown time zone "Berlin": use an IANA name such as Europe/Berlin or UTC. Did you mean Europe/Berlin?`) {
		t.Errorf("user.timezone: Berlin: %v, want a did-you-mean Europe/Berlin", err)
	}
}
