package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/anima-bot/anima/brain"
)

// walker checks a YAML node tree against the Config struct: every key known and
// set once, every value decodable into its field. It expands ${VAR} references in
// place and records the line of each key.
type walker struct {
	lookup   func(string) (string, bool)
	restore  *strings.Replacer // undoes shield
	lines    map[string]int    // full key -> line
	refs     map[string]bool   // full keys whose value holds a ${VAR} reference
	nulls    map[string]bool   // full keys written with no value ("key:")
	expanded map[*yaml.Node]bool
	errs     []*KeyError
	meant    map[string]bool     // full keys an unknown key was likely meant as (a typo's "did you mean")
	refusedN map[*yaml.Node]bool // the nodes fail was given
	pruned   map[*yaml.Node]bool // the nodes prune has been through
}

func (w *walker) fail(n *yaml.Node, key, format string, args ...any) {
	w.errs = append(w.errs, &KeyError{Key: key, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	w.refusedN[n] = true
}

// prune takes out of n every mapping entry whose key or value the walk refused, and
// every such list item, so that what is left decodes: a refused key keeps its default.
func (w *walker) prune(n *yaml.Node) {
	if n == nil || w.pruned[n] {
		return
	}
	w.pruned[n] = true
	var kept []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !w.refusedN[n.Content[i]] && !w.refusedN[n.Content[i+1]] {
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if !w.refusedN[c] {
				kept = append(kept, c)
			}
		}
	case yaml.AliasNode:
		w.prune(n.Alias)
		return
	default:
		return
	}
	n.Content = kept
	for _, c := range kept {
		w.prune(c)
	}
}

// section checks mapping n against struct type t; prefix is the dotted path of n.
func (w *walker) section(n *yaml.Node, t reflect.Type, prefix string) {
	n = resolveAlias(n)
	if isNull(n) {
		return
	}
	names := yamlFields(t)
	if n.Kind != yaml.MappingNode {
		w.fail(n, prefix, "want a mapping with the keys %s", strings.Join(names, ", "))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			w.merge(v, t, prefix)
			continue
		}
		key, ok := w.key(k, prefix, seen, names)
		if !ok {
			continue
		}
		f, ok := fieldByYAMLName(t, k.Value)
		if !ok {
			name := w.restore.Replace(k.Value)
			w.fail(k, key, "unknown key%s", suggest(name, names, prefix))
			if c := closest(name, names); c != "" {
				w.meant[join(prefix, c)] = true
			}
			continue
		}
		w.lines[key] = k.Line
		if f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct {
			w.entries(v, f.Type.Elem(), key)
			continue
		}
		if f.Type.Kind() == reflect.Struct && !isText(f.Type) {
			w.section(v, f.Type, key)
			continue
		}
		w.leaf(v, f.Type, key)
	}
}

// key is the dotted key of mapping key k under prefix, noted in seen (name → line); it is
// false, with the problem added, when k is not a plain name (allowed, when given, lists
// the names there are) or was set before in the same mapping.
func (w *walker) key(k *yaml.Node, prefix string, seen map[string]int, allowed []string) (string, bool) {
	if k.Kind != yaml.ScalarNode {
		if allowed == nil {
			w.fail(k, prefix, "keys must be plain names")
		} else {
			w.fail(k, prefix, "keys must be plain names; allowed keys: %s", strings.Join(allowed, ", "))
		}
		return "", false
	}
	key := join(prefix, w.restore.Replace(k.Value))
	if first, dup := seen[k.Value]; dup {
		w.fail(k, key, "set twice (first at line %d)", first)
		return "", false
	}
	seen[k.Value] = k.Line
	return key, true
}

// entries checks mapping n of named sections (mcp.servers.<name>), each against struct
// type t.
func (w *walker) entries(n *yaml.Node, t reflect.Type, prefix string) {
	n = resolveAlias(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		w.fail(n, prefix, "want a mapping of names to sections with the keys %s", strings.Join(yamlFields(t), ", "))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolveAlias(n.Content[i])
		key, ok := w.key(k, prefix, seen, nil)
		if !ok {
			continue
		}
		w.lines[key] = k.Line
		w.section(n.Content[i+1], t, key)
	}
}

// merge checks the value of a "<<" merge key: a mapping or a sequence of mappings.
func (w *walker) merge(v *yaml.Node, t reflect.Type, prefix string) {
	v = resolveAlias(v)
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			w.mergeOne(m, t, prefix)
		}
		return
	}
	w.mergeOne(v, t, prefix)
}

func (w *walker) mergeOne(m *yaml.Node, t reflect.Type, prefix string) {
	m = resolveAlias(m)
	if m.Kind != yaml.MappingNode {
		w.fail(m, prefix, "a << merge needs a mapping or a list of mappings")
		return
	}
	lines := w.lines
	w.lines = map[string]int{} // keys set directly take precedence over merged ones
	w.section(m, t, prefix)
	for k, l := range w.lines {
		if _, ok := lines[k]; !ok {
			lines[k] = l
		}
	}
	w.lines = lines
}

// leaf expands ${VAR} in n and checks that it decodes into a value of type t.
func (w *walker) leaf(n *yaml.Node, t reflect.Type, key string) {
	if isNull(resolveAlias(n)) {
		w.nulls[key] = true
	}
	before := len(w.errs)
	w.expand(n, key)
	if len(w.errs) > before {
		return
	}
	w.check(n, t, key)
}

// check reports whether n decodes into a value of type t, naming key and, for
// lists, the bad entry.
func (w *walker) check(n *yaml.Node, t reflect.Type, key string) {
	r := resolveAlias(n)
	if t.Kind() == reflect.Slice && r.Kind == yaml.SequenceNode {
		for _, e := range r.Content {
			w.check(e, t.Elem(), key)
		}
		return
	}
	if isText(t) && r.Kind != yaml.ScalarNode {
		// yaml would decode a mapping into the struct silently, ignoring its keys.
		w.fail(r, key, "want %s, got %s", describeType(t), describeNode(r))
		return
	}
	err := n.Decode(reflect.New(t).Interface())
	if err == nil {
		return
	}
	if _, ok := errors.AsType[*yaml.TypeError](err); ok {
		w.fail(r, key, "want %s, got %s", describeType(t), describeNode(r))
		return
	}
	w.fail(r, key, "%s", err.Error())
}

// expand replaces ${VAR} references in every scalar under n, once per node.
func (w *walker) expand(n *yaml.Node, key string) {
	if n == nil || w.expanded[n] {
		return
	}
	w.expanded[n] = true
	switch n.Kind {
	case yaml.AliasNode:
		w.expand(n.Alias, key)
	case yaml.ScalarNode:
		raw := w.restore.Replace(n.Value)
		if !strings.Contains(raw, "${") {
			return
		}
		w.refs[key] = true
		v, err := expandEnv(raw, w.lookup)
		if err != nil {
			w.fail(n, key, "%s", err.Error())
			return
		}
		n.Value = v
		if n.Style == 0 {
			n.Tag = "" // plain scalar: resolve the type of the expanded text, as if written so
		}
	case yaml.MappingNode: // a map of strings (env, headers): keys are never expanded
		for i := 1; i < len(n.Content); i += 2 {
			w.expand(n.Content[i], key)
		}
	default:
		for _, c := range n.Content {
			w.expand(c, key)
		}
	}
}

// unsaid is problems without those that follow from what the walk found wrong: a problem
// of a key the walk refused, or of one inside it (the value was not decoded and is the
// default), or of the key a refused unknown key was likely meant as (alowed_users makes
// allowed_users empty). Each problem is said once, and only when it is true of the file.
func (w *walker) unsaid(problems []*KeyError) []*KeyError {
	var out []*KeyError
	for _, p := range problems {
		if w.meant[p.Key] || w.refused(p.Key) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// refused reports whether the walk found key, or a section holding it, wrong.
func (w *walker) refused(key string) bool {
	for _, e := range w.errs {
		if e.Key == "" || e.Key == key || strings.HasPrefix(key, e.Key+".") {
			return true
		}
	}
	return false
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func describeType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Duration]():
		return `a duration such as "90s", "20m" or "6h"`
	case reflect.TypeFor[brain.QuietHours]():
		return `a time range "HH:MM-HH:MM" or ""`
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Pointer:
		return describeType(t.Elem())
	case reflect.Map:
		return "a mapping of names to " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "an "), "a ") + "s"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "an "), "a ") + "s"
	}
	return t.String()
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return strconv.Quote(v)
}
