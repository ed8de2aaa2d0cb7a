// Package setting is the vocabulary configuration sections are written in: the value
// types (Duration, Secret), the KeyError that names a bad key, and the Checker a section's
// validation reports to. It is a leaf, so that a plugin owns its section's type
// (plugins.<name>, with yaml tags, defaults and validation) in its own package, and
// package config embeds it without an import cycle.
package setting

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.yaml.in/yaml/v3"
)

// Secret is a string that is never printed: fmt, slog, encoding/json and YAML
// show "[redacted]" (or "" when it is empty). Reveal returns the value.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret itself, for handing to a client.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]", or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// Format prints String for every verb, %#v included.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText implements encoding.TextMarshaler (used by JSON, YAML and slog).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Duration is a time.Duration written in YAML as a Go duration string: "1s",
// "20m", "6h", "1h30m". Negative durations are rejected.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf(`want a duration such as "90s", "20m" or "6h"`)
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf(`invalid duration %q: want a Go duration such as "90s", "20m" or "6h"`, n.Value)
	}
	if v < 0 {
		return fmt.Errorf("invalid duration %q: must not be negative", n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
