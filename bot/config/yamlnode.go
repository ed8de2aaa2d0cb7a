package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The walk's small helpers on YAML nodes and struct fields: which node stands for which
// field, and the names a typo is matched against.

// isText reports whether t is a value written as one YAML string that it parses itself
// (brain.QuietHours), not a section of keys.
func isText(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

func yamlFields(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		names = append(names, yamlName(f))
	}
	return names
}

func fieldByYAMLName(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if yamlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// suggest names the closest known key, or lists them all.
func suggest(key string, names []string, section string) string {
	if best := closest(key, names); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	if section == "" {
		return "; the sections are " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("; %s accepts %s", section, strings.Join(names, ", "))
}

// closest is the name of names nearest key within an edit distance of 2, else "".
func closest(key string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := editDistance(key, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}
