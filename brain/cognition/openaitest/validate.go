package openaitest

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// wireRequest is the part of a chat completion request the validator reads straight from
// the JSON, so that it judges what went over the wire rather than what go-openai decoded.
type wireRequest struct {
	Model    string        `json:"model"`
	Messages []wireMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string          `json:"name"`
			Strict     *bool           `json:"strict"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	Stream     bool            `json:"stream"`
	StreamOpts *struct {
		IncludeUsage *bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens      int `json:"max_tokens"`
	MaxComp        int `json:"max_completion_tokens"`
	ResponseFormat *struct {
		Type       string      `json:"type"`
		JSONSchema *wireSchema `json:"json_schema"`
	} `json:"response_format"`
}

// wireMessage is one message of a wireRequest.
type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// wireSchema is the json_schema of a response_format.
type wireSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict *bool           `json:"strict"`
}

// validate checks one request body the way a strict OpenAI endpoint would and returns
// every problem found. issued reports whether the server handed out a tool call id.
func validate(raw []byte, issued func(id string) bool) []string {
	var req wireRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return []string{fmt.Sprintf("body is not a chat completion request: %v", err)}
	}
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }

	if req.Model == "" {
		add("model is empty")
	}
	if req.StreamOpts != nil && !req.Stream {
		add("stream_options is only allowed with stream: true")
	}
	if req.MaxTokens < 0 || req.MaxComp < 0 {
		add("negative max tokens")
	}
	if len(req.Messages) == 0 {
		add("messages is empty")
	}
	bad = append(bad, checkMessages(req.Messages, issued)...)

	names := map[string]bool{}
	for i, t := range req.Tools {
		if t.Type != "function" || t.Function == nil {
			add("tools[%d] is not a function tool", i)
			continue
		}
		f := t.Function
		if !toolName.MatchString(f.Name) {
			add("tools[%d] name %q does not match ^[a-zA-Z0-9_-]+$", i, f.Name)
		}
		if names[f.Name] {
			add("tools[%d] name %q is duplicated", i, f.Name)
		}
		names[f.Name] = true
		if f.Strict == nil || !*f.Strict {
			add("tool %s is not strict", f.Name)
		}
		for _, p := range CheckSchema(f.Parameters) {
			add("tool %s: %s", f.Name, p)
		}
	}
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" && len(req.Tools) == 0 {
		add("tool_choice is set but no tools are")
	}
	if rf := req.ResponseFormat; rf != nil {
		bad = append(bad, checkResponseFormat(rf.Type, rf.JSONSchema, req.Messages)...)
	}
	return bad
}

// checkMessages checks the conversation: each role's content, and that every tool call
// (with an id this server issued) is answered once, right after the message that made it.
func checkMessages(msgs []wireMessage, issued func(id string) bool) []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	open := map[string]bool{}     // tool call ids awaiting their tool message
	answered := map[string]bool{} // tool call ids already answered
	for i, m := range msgs {
		if m.Role != "tool" && len(open) > 0 {
			add("messages[%d] (%s) comes before the tool results of %v", i, m.Role, slices.Sorted(maps.Keys(open)))
			clear(open)
		}
		switch m.Role {
		case "system", "developer", "user":
			if isEmptyContent(m.Content) {
				add("messages[%d] (%s) has empty content", i, m.Role)
			}
			bad = append(bad, checkParts(i, m.Role, m.Content)...)
		case "assistant":
			if isEmptyContent(m.Content) && len(m.ToolCalls) == 0 {
				add("messages[%d] (assistant) has neither content nor tool calls", i)
			}
			for _, tc := range m.ToolCalls {
				switch {
				case tc.ID == "":
					add("messages[%d] has a tool call without id", i)
				case issued != nil && !issued(tc.ID):
					add("messages[%d] carries tool call id %q this server never issued", i, tc.ID)
				}
				if tc.Type != "function" {
					add("messages[%d] tool call %q has type %q", i, tc.ID, tc.Type)
				}
				if !toolName.MatchString(tc.Function.Name) {
					add("messages[%d] tool call %q has bad name %q", i, tc.ID, tc.Function.Name)
				}
				open[tc.ID] = true
			}
		case "tool":
			switch {
			case m.ToolCallID == "":
				add("messages[%d] (tool) has no tool_call_id", i)
			case answered[m.ToolCallID]:
				add("messages[%d] answers tool call %q twice", i, m.ToolCallID)
			case !open[m.ToolCallID]:
				add("messages[%d] answers tool call %q that no preceding assistant message issued", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			answered[m.ToolCallID] = true
			if isEmptyContent(m.Content) {
				add("messages[%d] (tool) has empty content", i)
			}
		default:
			add("messages[%d] has invalid role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		add("tool calls %v are never answered", slices.Sorted(maps.Keys(open)))
	}
	return bad
}

// checkResponseFormat judges response_format the way OpenAI does: a known type; a
// json_schema one with a name, a schema, and — when strict — a schema strict mode takes
// (CheckFormatSchema); a json_object one only when the messages say "json".
func checkResponseFormat(typ string, js *wireSchema, msgs []wireMessage) []string {
	switch typ {
	case "text":
		return nil
	case "json_object":
		for _, m := range msgs {
			if strings.Contains(strings.ToLower(string(m.Content)), "json") {
				return nil
			}
		}
		return []string{"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'"}
	case "json_schema":
	default:
		return []string{fmt.Sprintf("response_format: invalid type %q (text, json_object or json_schema)", typ)}
	}
	if js == nil {
		return []string{"response_format of type 'json_schema' lacks 'json_schema'"}
	}
	if !toolName.MatchString(js.Name) {
		return []string{fmt.Sprintf("response_format.json_schema.name %q does not match ^[a-zA-Z0-9_-]{1,64}$", js.Name)}
	}
	if len(js.Schema) == 0 || string(js.Schema) == "null" {
		return []string{fmt.Sprintf("response_format '%s' lacks a schema", js.Name)}
	}
	if js.Strict == nil || !*js.Strict {
		var v map[string]any
		if json.Unmarshal(js.Schema, &v) != nil || v == nil {
			return []string{fmt.Sprintf("Invalid schema for response_format '%s': not a JSON object", js.Name)}
		}
		return nil
	}
	var bad []string
	for _, p := range CheckFormatSchema(js.Schema) {
		bad = append(bad, fmt.Sprintf("Invalid schema for response_format '%s': %s", js.Name, p))
	}
	return bad
}

// CheckFormatSchema reports why raw is not a schema strict structured outputs take: the
// root is an object schema, and every object schema in it has additionalProperties false
// and lists every property in required (see CheckSchema). It returns nil for a valid one.
func CheckFormatSchema(raw json.RawMessage) []string { return checkRoot("schema", raw) }

func isEmptyContent(c json.RawMessage) bool {
	if len(c) == 0 || string(c) == "null" || string(c) == `""` {
		return true
	}
	var parts []any
	if json.Unmarshal(c, &parts) == nil {
		return len(parts) == 0
	}
	return false
}

// CheckSchema reports why raw is not a strict-mode function parameter schema: the root is
// an object schema, every object schema (nested ones too, inside properties, items and
// anyOf) has additionalProperties false and lists every property in required. Optional
// fields are expected as a type union with "null". It returns nil for a valid schema.
func CheckSchema(raw json.RawMessage) []string { return checkRoot("parameters", raw) }

// checkRoot checks the schema raw, named path in what it reports: an object schema at the
// root, then every node (checkNode).
func checkRoot(path string, raw json.RawMessage) []string {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil || root == nil {
		return []string{path + " is not a JSON object"}
	}
	if t, _ := root["type"].(string); t != "object" {
		return []string{path + `: root type must be "object"`}
	}
	var bad []string
	checkNode(path, root, &bad)
	return bad
}

func checkNode(path string, node map[string]any, bad *[]string) {
	add := func(format string, args ...any) { *bad = append(*bad, path+": "+fmt.Sprintf(format, args...)) }
	types, ok := typeSet(node["type"])
	if !ok {
		add("type must be a string or an array of strings")
	}
	if slices.Contains(types, "object") {
		if ap, ok := node["additionalProperties"].(bool); !ok || ap {
			add("additionalProperties must be false")
		}
		props, _ := node["properties"].(map[string]any)
		if _, present := node["properties"]; present && props == nil {
			add("properties must be an object")
		}
		req := map[string]bool{}
		list, isList := node["required"].([]any)
		if _, present := node["required"]; present && !isList {
			add("required must be an array")
		}
		for _, r := range list {
			name, ok := r.(string)
			if !ok {
				add("required holds a non-string")
				continue
			}
			if _, ok := props[name]; !ok {
				add("required lists %q which is not a property", name)
			}
			req[name] = true
		}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if !req[name] {
				add("property %q is not in required (strict mode needs every property required; use a null union for optional fields)", name)
			}
			child, ok := props[name].(map[string]any)
			if !ok {
				add("property %q is not a schema object", name)
				continue
			}
			checkNode(path+"."+name, child, bad)
		}
	}
	if slices.Contains(types, "array") {
		if items, ok := node["items"].(map[string]any); ok {
			checkNode(path+"[]", items, bad)
		} else {
			add("array without an items schema")
		}
	}
	if anyOf, ok := node["anyOf"].([]any); ok {
		for i, b := range anyOf {
			if child, ok := b.(map[string]any); ok {
				checkNode(fmt.Sprintf("%s.anyOf[%d]", path, i), child, bad)
			}
		}
	}
}

// typeSet returns the JSON schema "type" keyword as a list; a missing type (anyOf, enum,
// $ref) is an empty list.
func typeSet(v any) ([]string, bool) {
	switch t := v.(type) {
	case nil:
		return nil, true
	case string:
		return []string{t}, true
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}
