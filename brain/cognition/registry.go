package cognition

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/prompt"
)

// ErrBadTool is returned (wrapped) by Register for a tool that cannot be offered to the
// model: a bad or duplicate name, or parameters that are not a strict schema.
var ErrBadTool = errors.New("invalid tool")

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Registry holds the tools the model may call. Plugins, memory and the scheduler register
// theirs at assembly time; it is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools []brain.Tool // registration order
	specs map[string]brain.ToolSpec
	byNm  map[string]brain.Tool
	group map[string]string // tool name -> its SetTools group
	// offer caches what a profile offers the model within a share for external tools;
	// Register and SetTools empty it. Tools are registered at assembly time, and an MCP
	// server's change with its listing, so most requests reuse the entries.
	offer map[offerKey]*offer
}

// offerKey is a profile and the tokens its external tools may take together.
type offerKey struct {
	profile brain.Profile
	share   int
}

// offer is what a profile's tools add to each request, computed once per profile. Its
// slices are shared by every run and request and must not be modified.
type offer struct {
	// specs are the tools offered: every tool of the profile registered with Register, and
	// its external tools (SetTools) fenced as their server's words (externalSpec) within
	// the share (withinShare).
	specs   []brain.ToolSpec
	dropped []dropped     // the external tools left out for the share, per group
	tokens  int           // prompt.SpecTokens(specs)
	defs    []openai.Tool // toolDefs(specs)
	// calm is defs without core_escalate (nil when that leaves none): what a run offers
	// once it is on the smart model or has escalated.
	calm []openai.Tool
}

// Tokens is what the offered tool definitions take of a prompt's budget (prompt.Offer).
func (o *offer) Tokens() int { return o.tokens }

// Offers reports whether the tool named name is offered (prompt.Offer).
func (o *offer) Offers(name string) bool {
	return slices.ContainsFunc(o.specs, func(s brain.ToolSpec) bool { return s.Name == name })
}

// NewRegistry returns a registry holding the core tools handled here: core_escalate and
// core_defer.
func NewRegistry() *Registry {
	r := &Registry{specs: map[string]brain.ToolSpec{}, byNm: map[string]brain.Tool{}, group: map[string]string{}}
	for _, t := range []brain.Tool{escalateTool{}, deferTool{}} {
		if err := r.Register(t); err != nil {
			panic(err) // the core tools are constants; a failure is a bug caught by every test
		}
	}
	return r
}

// Register adds t. It returns an error wrapping ErrBadTool when the name does not match
// ^[a-zA-Z0-9_-]{1,64}$, is already taken, or the parameters are not a strict schema.
func (r *Registry) Register(t brain.Tool) error {
	spec := t.Spec()
	if err := checkTool(spec); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byNm[spec.Name]; dup {
		return fmt.Errorf("register tool %s: duplicate name: %w", spec.Name, ErrBadTool)
	}
	r.tools = append(r.tools, t)
	r.byNm[spec.Name] = t
	r.specs[spec.Name] = withProfiles(spec)
	r.offer = nil
	return nil
}

// SetTools replaces the tools of group (those given to it by the last SetTools) with ts,
// each checked as Register checks it: tools that change while anima runs, such as an MCP
// server's, which come and go with the server. It returns an error wrapping ErrBadTool
// for each tool it refused; the others are offered from the next request on.
func (r *Registry) SetTools(group string, ts []brain.Tool) []error {
	var errs []error
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.tools[:0:0]
	for _, t := range r.tools {
		name := t.Spec().Name
		if r.group[name] == group {
			delete(r.byNm, name)
			delete(r.specs, name)
			delete(r.group, name)
			continue
		}
		kept = append(kept, t)
	}
	r.tools = kept
	for _, t := range ts {
		spec := t.Spec()
		if err := checkTool(spec); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := r.byNm[spec.Name]; dup {
			errs = append(errs, fmt.Errorf("register tool %s: duplicate name: %w", spec.Name, ErrBadTool))
			continue
		}
		r.tools = append(r.tools, t)
		r.byNm[spec.Name] = t
		r.specs[spec.Name] = withProfiles(spec)
		r.group[spec.Name] = group
	}
	r.offer = nil
	return errs
}

// withProfiles is spec as the registry keeps it: a spec that lists no profile is a
// conversation's tool, offered to ProfileChat alone.
func withProfiles(spec brain.ToolSpec) brain.ToolSpec {
	if len(spec.Profiles) == 0 {
		spec.Profiles = []brain.Profile{brain.ProfileChat}
	}
	return spec
}

// checkTool is what Register and SetTools require of a tool's spec.
func checkTool(spec brain.ToolSpec) error {
	if !toolNameRE.MatchString(spec.Name) {
		return fmt.Errorf("register tool %q: name must match ^[a-zA-Z0-9_-]{1,64}$: %w", spec.Name, ErrBadTool)
	}
	if err := CheckSchema(spec.Parameters); err != nil {
		return fmt.Errorf("register tool %s: %w", spec.Name, err)
	}
	return nil
}

// Tools returns the tools a profile may use, in registration order: the tools whose spec
// lists the profile ("" is ProfileChat). The list is obeyed for every profile, chat
// included: a tool meant for the nightly reflection alone is never offered to a chat turn.
func (r *Registry) Tools(p brain.Profile) []brain.Tool {
	if p == "" {
		p = brain.ProfileChat
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]brain.Tool, 0, len(r.tools))
	for _, t := range r.tools {
		if slices.Contains(r.specs[t.Spec().Name].Profiles, p) {
			out = append(out, t)
		}
	}
	return out
}

// lookup returns the tool and its spec (read once at registration).
func (r *Registry) lookup(name string) (brain.Tool, brain.ToolSpec, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.byNm[name]
	return t, r.specs[name], ok
}

// offerFor returns the profile's cached offer with at most share tokens of external tools,
// computing it on first use after a Register or SetTools.
func (r *Registry) offerFor(p brain.Profile, share int) *offer {
	if p == "" {
		p = brain.ProfileChat
	}
	key := offerKey{p, share}
	r.mu.RLock()
	o := r.offer[key]
	r.mu.RUnlock()
	if o != nil {
		return o
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if o := r.offer[key]; o != nil {
		return o
	}
	o = &offer{}
	var groups []string // groups[i]: the SetTools group of o.specs[i]; "" for Register's
	for _, t := range r.tools {
		spec := r.specs[t.Spec().Name]
		if slices.Contains(spec.Profiles, p) {
			g := r.group[spec.Name]
			if g != "" {
				spec = externalSpec(g, spec)
			}
			o.specs, groups = append(o.specs, spec), append(groups, g)
		}
	}
	o.specs, o.dropped = withinShare(o.specs, groups, share)
	o.tokens = prompt.SpecTokens(o.specs)
	o.defs = toolDefs(o.specs)
	for _, d := range o.defs {
		if d.Function.Name != ToolEscalate {
			o.calm = append(o.calm, d)
		}
	}
	if r.offer == nil {
		r.offer = map[offerKey]*offer{}
	}
	r.offer[key] = o
	return o
}

// CheckSchema returns an error wrapping ErrBadTool when raw is not a strict-mode parameter
// schema: the root must be {"type":"object"}, and every object schema, however deeply
// nested (properties, array items, anyOf branches), must set additionalProperties to false
// and list every property in required. Optional fields are written as a type union with
// "null", e.g. {"type":["string","null"]}.
func CheckSchema(raw json.RawMessage) error {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil || root == nil {
		return fmt.Errorf("parameters are not a JSON object: %w", ErrBadTool)
	}
	if t, _ := root["type"].(string); t != "object" {
		return fmt.Errorf(`parameters: root type must be "object": %w`, ErrBadTool)
	}
	return checkSchemaNode("parameters", root)
}

func checkSchemaNode(path string, node map[string]any) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %w", path, fmt.Sprintf(format, args...), ErrBadTool)
	}
	var types []string
	switch t := node["type"].(type) {
	case nil:
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return bad("type must be a string or a list of strings")
			}
			types = append(types, s)
		}
	default:
		return bad("type must be a string or a list of strings")
	}
	if slices.Contains(types, "object") {
		if ap, ok := node["additionalProperties"].(bool); !ok || ap {
			return bad("additionalProperties must be false")
		}
		props, _ := node["properties"].(map[string]any)
		if _, present := node["properties"]; present && props == nil {
			return bad("properties must be an object")
		}
		required := map[string]bool{}
		list, _ := node["required"].([]any)
		for _, x := range list {
			name, _ := x.(string)
			if _, ok := props[name]; !ok {
				return bad("required lists %q, which is not a property", name)
			}
			required[name] = true
		}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if !required[name] {
				return bad("property %q must be in required (write an optional field as a null union)", name)
			}
			child, ok := props[name].(map[string]any)
			if !ok {
				return bad("property %q is not a schema", name)
			}
			if err := checkSchemaNode(path+"."+name, child); err != nil {
				return err
			}
		}
	}
	if slices.Contains(types, "array") {
		items, ok := node["items"].(map[string]any)
		if !ok {
			return bad("an array needs an items schema")
		}
		if err := checkSchemaNode(path+"[]", items); err != nil {
			return err
		}
	}
	if anyOf, ok := node["anyOf"].([]any); ok {
		for i, b := range anyOf {
			child, ok := b.(map[string]any)
			if !ok {
				return bad("anyOf[%d] is not a schema", i)
			}
			if err := checkSchemaNode(fmt.Sprintf("%s.anyOf[%d]", path, i), child); err != nil {
				return err
			}
		}
	}
	return nil
}

// toolDefs converts specs to go-openai tools.
func toolDefs(specs []brain.ToolSpec) []openai.Tool {
	out := make([]openai.Tool, len(specs))
	for i, s := range specs {
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: s.Name, Description: s.Description, Strict: true, Parameters: json.RawMessage(s.Parameters),
		}}
	}
	return out
}
