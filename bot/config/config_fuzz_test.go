package config

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// FuzzLoadConfig feeds arbitrary bytes to Parse. Parse must not panic, and
// whatever it accepts must be valid and also accepted, with the same result, by
// yaml's own strict decoder (so the key walk is never laxer than KnownFields).
func FuzzLoadConfig(f *testing.F) {
	example, err := os.ReadFile("../../config.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(example),
		"",
		"llm:\n  fast_modle: x\n",
		"telegram: {mode: webhook, webhook: {secret_token: \"${S:-abc}\"}, allowed_users: [1, 2]}\n",
		"proactive: {quiet_hours: \"23:00-07:00\", min_silence: 1h30m}\nbrain: {tick: 10ms}\n",
		"base: &b {level: debug}\nlog:\n  <<: *b\n",
		"log: &a {level: info}\nbrain: *a\n",
		"a: &a [*a]\n",
		"telegram:\n  token: ${T\n",
		"- - - x\n",
		"log: {level: info}\n---\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parse(data, noEnv)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that Validate rejects: %v", err)
		}
		_ = cfg.Redacted()
		if bytes.Contains(data, []byte("${")) {
			return // expansion changed the values; yaml alone cannot agree
		}
		strict := Default()
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		// io.EOF: no document at all, which Parse reads as all defaults.
		if err := dec.Decode(&strict); err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("Parse accepted what yaml's strict decoder rejects: %v\n%q", err, data)
		}
		if diff := cmp.Diff(strict, cfg); diff != "" {
			t.Fatalf("Parse and yaml's strict decoder disagree (-yaml +Parse):\n%s\n%q", diff, data)
		}
	})
}
