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

var (
	specOnce    sync.Once
	specMethods map[string]methodSpec // keyed by lower-case name: the Bot API ignores case
	specErr     error
)

// loadSpec parses the embedded spec once.
func loadSpec() (map[string]methodSpec, error) {
	specOnce.Do(func() {
		var doc struct {
			Methods map[string]struct {
				Name   string `json:"name"`
				Fields []struct {
					Name     string `json:"name"`
					Required bool   `json:"required"`
				} `json:"fields"`
			} `json:"methods"`
		}
		if err := json.Unmarshal(specJSON, &doc); err != nil {
			specErr = fmt.Errorf("decode embedded bot api spec: %w", err)
			return
		}
		specMethods = make(map[string]methodSpec, len(doc.Methods))
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
			specMethods[strings.ToLower(name)] = ms
		}
	})
	return specMethods, specErr
}

var (
	typesOnce sync.Once
	specTypes map[string]map[string]bool // type name → field name → required
	typesErr  error
)

// loadTypes parses the spec's object types once.
func loadTypes() (map[string]map[string]bool, error) {
	typesOnce.Do(func() {
		var doc struct {
			Types map[string]struct {
				Fields []struct {
					Name     string `json:"name"`
					Required bool   `json:"required"`
				} `json:"fields"`
			} `json:"types"`
		}
		if err := json.Unmarshal(specJSON, &doc); err != nil {
			typesErr = fmt.Errorf("decode embedded bot api spec: %w", err)
			return
		}
		specTypes = make(map[string]map[string]bool, len(doc.Types))
		for name, t := range doc.Types {
			fields := make(map[string]bool, len(t.Fields))
			for _, f := range t.Fields {
				fields[f.Name] = f.Required
			}
			specTypes[name] = fields
		}
	})
	return specTypes, typesErr
}
