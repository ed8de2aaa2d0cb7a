package telegramtest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// specJSON is the Bot API description (methods, their fields and which are required), a
// copy of ../shared/spec/telegram-bot-api.json; its licence is testdata/telegram-bot-api.LICENSE.
//
//go:embed testdata/telegram-bot-api.json
var specJSON []byte

// methodSpec is what the fake knows about one Bot API method.
type methodSpec struct {
	Name     string   // canonical spelling, e.g. "sendMessage"
	Required []string // required parameter names
}

// specField is one field of a method or an object type in the spec.
type specField struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
}

// specIndex is what the fake looks up in the spec.
type specIndex struct {
	methods map[string]methodSpec      // keyed by lower-case name: the Bot API ignores case
	types   map[string]map[string]bool // object type name → field name → required
}

// parsedSpec is the embedded spec, parsed once.
var parsedSpec = sync.OnceValues(func() (specIndex, error) {
	var out specIndex
	var doc struct {
		Methods map[string]struct {
			Name   string      `json:"name"`
			Fields []specField `json:"fields"`
		} `json:"methods"`
		Types map[string]struct {
			Fields []specField `json:"fields"`
		} `json:"types"`
	}
	if err := json.Unmarshal(specJSON, &doc); err != nil {
		return out, fmt.Errorf("decode embedded bot api spec: %w", err)
	}
	out.methods = make(map[string]methodSpec, len(doc.Methods))
	for key, m := range doc.Methods {
		name := m.Name
		if name == "" {
			name = key
		}
		ms := methodSpec{Name: name}
		for _, f := range m.Fields {
			if f.Required {
				ms.Required = append(ms.Required, f.Name)
			}
		}
		out.methods[strings.ToLower(name)] = ms
	}
	out.types = make(map[string]map[string]bool, len(doc.Types))
	for name, t := range doc.Types {
		fields := make(map[string]bool, len(t.Fields))
		for _, f := range t.Fields {
			fields[f.Name] = f.Required
		}
		out.types[name] = fields
	}
	return out, nil
})

// loadSpec is the spec's methods, keyed by lower-case name.
func loadSpec() (map[string]methodSpec, error) {
	s, err := parsedSpec()
	return s.methods, err
}

// loadTypes is the spec's object types: type name → field name → required.
func loadTypes() (map[string]map[string]bool, error) {
	s, err := parsedSpec()
	return s.types, err
}
