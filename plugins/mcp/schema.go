package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
)

// errSchema is wrapped by strictSchema for an input schema that cannot be offered.
var errSchema = errors.New("input schema cannot be made strict")

// shape remembers which properties strictSchema made nullable, so that a call's null
// arguments for them are dropped before the server sees them (it declared them optional,
// not nullable).
type shape struct {
	optional map[string]bool
	props    map[string]*shape
	items    *shape
}

// strictSchema converts an MCP tool's input schema to the strict form the registry and
// OpenAI's strict mode need: every object closed (additionalProperties false) and every
// property required, an optional one becoming a union with null. Keywords strict mode
// refuses (default, $schema, oneOf as such) are dropped or rewritten. A schema that is
// not an object, has an open map (additionalProperties a schema), allOf, $ref or an
// array without items cannot be converted and is refused.
func strictSchema(in any) (json.RawMessage, *shape, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errSchema, err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil || root == nil {
		return nil, nil, fmt.Errorf("%w: not a JSON object", errSchema)
	}
	if t, ok := root["type"]; ok && t != "object" {
		return nil, nil, fmt.Errorf("%w: root type is %v, not object", errSchema, t)
	}
	root["type"] = "object"
	sh, err := strictNode("", root)
	if err != nil {
		return nil, nil, err
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errSchema, err)
	}
	return out, sh, nil
}

func strictNode(path string, node map[string]any) (*shape, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", errSchema, "parameters"+path, fmt.Sprintf(format, args...))
	}
	for _, k := range []string{"$ref", "allOf", "not", "patternProperties", "if"} {
		if _, ok := node[k]; ok {
			return nil, bad("%s is not supported", k)
		}
	}
	delete(node, "$schema")
	delete(node, "default")
	delete(node, "$id")
	if one, ok := node["oneOf"]; ok {
		node["anyOf"] = one
		delete(node, "oneOf")
	}
	sh := &shape{}
	if !validType(node["type"]) {
		return nil, bad("type must be a string or a list of strings")
	}
	types := typeList(node["type"])
	if types == nil {
		if _, ok := node["properties"]; ok {
			types = []string{"object"}
			node["type"] = "object"
		}
	}
	if slices.Contains(types, "object") {
		switch ap := node["additionalProperties"].(type) {
		case nil, bool:
			// Open (true) becomes closed: the model sends only the declared properties.
		default:
			_ = ap
			return nil, bad("additionalProperties is a schema (an open map)")
		}
		node["additionalProperties"] = false
		props, _ := node["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		node["properties"] = props
		req := map[string]bool{}
		list, _ := node["required"].([]any)
		for _, x := range list {
			if name, ok := x.(string); ok {
				req[name] = true
			}
		}
		names := slices.Sorted(maps.Keys(props))
		sh.optional, sh.props = map[string]bool{}, map[string]*shape{}
		all := make([]any, 0, len(names))
		for _, name := range names {
			child, ok := props[name].(map[string]any)
			if !ok {
				if b, isBool := props[name].(bool); isBool && b {
					child = map[string]any{} // true: any value
					props[name] = child
				} else {
					return nil, bad("property %q is not a schema", name)
				}
			}
			csh, err := strictNode(path+"."+name, child)
			if err != nil {
				return nil, err
			}
			sh.props[name] = csh
			if !req[name] {
				nullable(child)
				sh.optional[name] = true
			}
			all = append(all, name)
		}
		node["required"] = all
	}
	if slices.Contains(types, "array") {
		items, ok := node["items"].(map[string]any)
		if !ok {
			return nil, bad("an array needs one items schema")
		}
		ish, err := strictNode(path+"[]", items)
		if err != nil {
			return nil, err
		}
		sh.items = ish
	}
	if anyOf, ok := node["anyOf"].([]any); ok {
		for i, b := range anyOf {
			child, ok := b.(map[string]any)
			if !ok {
				return nil, bad("anyOf[%d] is not a schema", i)
			}
			if _, err := strictNode(fmt.Sprintf("%s.anyOf[%d]", path, i), child); err != nil {
				return nil, err
			}
		}
	}
	return sh, nil
}

// nullable lets node also be null: a type union, a null branch of anyOf, and null in an
// enum. A schema with neither type nor anyOf already allows null.
func nullable(node map[string]any) {
	types := typeList(node["type"])
	switch {
	case types != nil:
		if !slices.Contains(types, "null") {
			list := make([]any, 0, len(types)+1)
			for _, t := range types {
				list = append(list, t)
			}
			node["type"] = append(list, "null")
		}
	case node["anyOf"] != nil:
		branches, _ := node["anyOf"].([]any)
		node["anyOf"] = append(branches, map[string]any{"type": "null"})
	}
	if enum, ok := node["enum"].([]any); ok && !slices.Contains(enum, nil) {
		node["enum"] = append(enum, nil)
	}
}

// validType reports whether t is absent, a string, or a list of strings.
func validType(t any) bool {
	switch t := t.(type) {
	case nil, string:
		return true
	case []any:
		for _, x := range t {
			if _, ok := x.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}

func typeList(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// strip removes, in place, the null values the model gave for properties that were
// optional before strictSchema made them nullable.
func (sh *shape) strip(v any) {
	if sh == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v[k] == nil && sh.optional[k] {
				delete(v, k)
				continue
			}
			sh.props[k].strip(v[k])
		}
	case []any:
		for _, x := range v {
			sh.items.strip(x)
		}
	}
}
