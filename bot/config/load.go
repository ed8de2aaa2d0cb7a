package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Load reads the YAML file at path and returns it decoded over Default() and
// validated; see Parse. Each error is prefixed with path.
func Load(path string) (Config, error) {
	return load(path, Config.validate, false)
}

// load reads the file at path and decodes it like Parse, judging it with check; with
// keep, the decoded configuration comes back with the problems of its values too.
func load(path string, check func(Config) []*KeyError, keep bool) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config %s: %w", path, err)
	}
	cfg, err := parseWith(data, os.LookupEnv, check, keep)
	if err != nil {
		return cfg, prefixErrors(path, err)
	}
	return cfg, nil
}

// Parse decodes a YAML configuration over Default() and validates it.
//
// Scalar values may reference environment variables as ${NAME} or
// ${NAME:-default} (the default is used when NAME is unset or empty). A missing
// variable expands to "", and an unquoted value that expands to nothing counts as
// absent, so the key keeps its default. "$${" gives a literal "${"; any other "$"
// is literal. A reference must fit on one line. Values are substituted after YAML
// parsing, so a variable may hold any characters ("#", ": ", quotes) without
// changing the document's structure, and references work unquoted in flow style
// too: allowed_users: [${OWNER_ID}]. Keys are never expanded.
//
// The variables of EnvDefaults (ANIMA_TELEGRAM_TOKEN, ANIMA_LLM_API_KEY,
// ANIMA_STORAGE_PATH, ANIMA_METRICS_LISTEN, ANIMA_WEBHOOK_SECRET) fill in their keys when
// the file leaves them out; a value or ${VAR} reference written for the key wins.
//
// Unknown keys, duplicate keys and values of the wrong type are errors naming the
// full key and its line. All problems are returned together (errors.Join); each
// is a *KeyError unless the YAML itself does not parse.
func Parse(data []byte) (Config, error) {
	return parse(data, os.LookupEnv)
}

func parse(data []byte, lookup func(string) (string, bool)) (Config, error) {
	return parseWith(data, lookup, Config.validate, false)
}

// parseWith is parse judging the decoded values with check; with keep, a configuration
// whose values have problems is returned with them (one that does not decode never is).
func parseWith(data []byte, lookup func(string) (string, bool), check func(Config) []*KeyError, keep bool) (Config, error) {
	cfg := Default()
	data, restore := shield(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF), err == nil && len(doc.Content) == 0:
		applyEnvDefaults(&cfg, lookup, func(string) (bool, bool) { return false, false })
		return cfg, joinKeyErrors(check(cfg))
	case err != nil:
		return Config{}, fmt.Errorf("parse YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return Config{}, fmt.Errorf("parse YAML: %w", err)
		}
		return Config{}, &KeyError{Line: extra.Line, Msg: "a second YAML document; keep the whole configuration in one"}
	}

	w := walker{lookup: lookup, restore: restore, lines: map[string]int{}, refs: map[string]bool{}, nulls: map[string]bool{},
		expanded: map[*yaml.Node]bool{}, meant: map[string]bool{}, refusedN: map[*yaml.Node]bool{}, pruned: map[*yaml.Node]bool{}}
	w.section(doc.Content[0], reflect.TypeFor[Config](), "")
	// The walk above is the strict check (yaml's own KnownFields does not apply to
	// Node.Decode and cannot name the full key); this fills in the values. What the walk
	// refused is left out and keeps its default, so the values' problems are judged and
	// reported with the walk's, all in one go.
	if len(w.errs) > 0 {
		w.prune(&doc)
	}
	if err := doc.Decode(&cfg); err != nil {
		return Config{}, errors.Join(joinKeyErrors(w.errs), fmt.Errorf("decode config: %w", err))
	}
	applyEnvDefaults(&cfg, lookup, func(key string) (bool, bool) { return w.lines[key] > 0 && !w.nulls[key], w.refs[key] })
	problems := check(cfg)
	for _, p := range problems {
		p.Line = w.lines[p.Key]
	}
	problems = append(w.errs, w.unsaid(problems)...)
	// In the order of the file; what no line holds (a key run needs and the file lacks) last.
	slices.SortStableFunc(problems, func(a, b *KeyError) int {
		return cmp.Compare(lineOrder(a.Line), lineOrder(b.Line))
	})
	if len(problems) > 0 && !keep {
		return Config{}, joinKeyErrors(problems)
	}
	return cfg, joinKeyErrors(problems)
}

// lineOrder sorts line 0 (none) after every line.
func lineOrder(line int) int {
	if line == 0 {
		return math.MaxInt
	}
	return line
}

func joinKeyErrors(errs []*KeyError) error {
	if len(errs) == 0 {
		return nil
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

// prefixErrors prefixes each error joined in err with path, keeping them unwrappable.
func prefixErrors(path string, err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return fmt.Errorf("%s: %w", path, err)
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, fmt.Errorf("%s: %w", path, e))
	}
	return errors.Join(out...)
}

// Check loads and validates the configuration at path; with run set it also checks what
// `anima run` needs (token, allowed users, a key for a remote endpoint), reporting every
// problem at once, each prefixed with path and its line.
func Check(path string, run bool) (Config, error) {
	if !run {
		return Load(path)
	}
	return load(path, Config.runProblems, false)
}

// Inspect is Check(path, true) that also returns the configuration when the problems are
// in its values, so that a caller can look further (`anima check` tries the store path,
// the token and the model too); the configuration is zero only when the file cannot be
// read or decoded.
func Inspect(path string) (Config, error) {
	return load(path, Config.runProblems, true)
}
