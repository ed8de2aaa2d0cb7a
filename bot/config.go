package bot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is anima's configuration, read from YAML by Load. The YAML keys (the
// struct tags) are a public contract documented in config.yaml at the repo root.
type Config struct {
	Telegram  TelegramConfig  `yaml:"telegram"`
	LLM       LLMConfig       `yaml:"llm"`
	Storage   StorageConfig   `yaml:"storage"`
	Metrics   MetricsConfig   `yaml:"metrics"`
	Proactive ProactiveConfig `yaml:"proactive"`
	User      UserConfig      `yaml:"user"`
	Persona   PersonaConfig   `yaml:"persona"`
	Brain     BrainConfig     `yaml:"brain"`
	Log       LogConfig       `yaml:"log"`
}

// Telegram update delivery modes, the allowed values of telegram.mode.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// TelegramConfig is the telegram section: how to reach the Bot API and who may talk to anima.
type TelegramConfig struct {
	Token   Secret        `yaml:"token"`   // Bot API token from @BotFather
	APIURL  string        `yaml:"api_url"` // Bot API base URL; a fake or a self-hosted Bot API server
	Mode    string        `yaml:"mode"`    // ModePolling or ModeWebhook
	Webhook WebhookConfig `yaml:"webhook"`
	// AllowedUsers are the Telegram user ids anima answers. ValidateRun refuses an
	// empty list unless Public is set.
	AllowedUsers []int64 `yaml:"allowed_users"`
	Public       bool    `yaml:"public"` // answer everyone
}

// WebhookConfig is telegram.webhook, used when telegram.mode is webhook.
type WebhookConfig struct {
	Listen string `yaml:"listen"` // host:port the webhook HTTP server binds
	Path   string `yaml:"path"`   // HTTP path updates are posted to, starting with "/"
	// PublicURL is the public https base URL (scheme, host, maybe a path prefix)
	// Telegram reaches the server at; anima registers PublicURL + Path with
	// setWebhook. Empty means the webhook is registered by other means.
	PublicURL string `yaml:"public_url"`
	// SecretToken is sent by Telegram in X-Telegram-Bot-Api-Secret-Token: 1–256
	// characters of A-Z a-z 0-9 _ -. Required in webhook mode.
	SecretToken Secret `yaml:"secret_token"`
}

// LLMConfig is the llm section: an OpenAI-compatible endpoint and the budget for it.
type LLMConfig struct {
	BaseURL             string   `yaml:"base_url"` // OpenAI-compatible API base, e.g. https://api.openai.com/v1
	APIKey              Secret   `yaml:"api_key"`
	FastModel           string   `yaml:"fast_model"`           // cheap model for routine turns
	SmartModel          string   `yaml:"smart_model"`          // model used when the fast one is unsure
	RequestTimeout      Duration `yaml:"request_timeout"`      // per request, > 0
	ConfidenceThreshold float64  `yaml:"confidence_threshold"` // in [0,1]; below it the smart model is used
	DailyTokenBudget    int64    `yaml:"daily_token_budget"`   // tokens per day; 0 = unlimited
	ContextTokens       int      `yaml:"context_tokens"`       // prompt budget, ≥ 500
	MaxOutputTokens     int      `yaml:"max_output_tokens"`    // completion limit, > 0
}

// StorageConfig is the storage section.
type StorageConfig struct {
	Path string `yaml:"path"` // bbolt database file
}

// MetricsConfig is the metrics section.
type MetricsConfig struct {
	// Listen is the host:port serving /metrics, /healthz and /readyz; "" disables it.
	Listen string `yaml:"listen"`
}

// ProactiveConfig is the proactive section: when anima may write first.
type ProactiveConfig struct {
	Enabled       bool       `yaml:"enabled"`
	MinSilence    Duration   `yaml:"min_silence"`    // silence before anima may reach out
	Cooldown      Duration   `yaml:"cooldown"`       // minimum gap between proactive messages
	FollowupAfter Duration   `yaml:"followup_after"` // delay before following up on an open topic
	QuietHours    QuietHours `yaml:"quiet_hours"`    // no proactive messages in this window
	MaxPerDay     int        `yaml:"max_per_day"`    // proactive messages per day, ≥ 0
}

// UserConfig is the user section.
type UserConfig struct {
	Timezone string `yaml:"timezone"` // IANA name, e.g. Europe/Berlin; quiet hours use it
}

// Location returns the time zone named by Timezone.
func (u UserConfig) Location() (*time.Location, error) {
	loc, err := time.LoadLocation(u.Timezone)
	if err != nil {
		return nil, fmt.Errorf("load time zone %q: %w", u.Timezone, err)
	}
	return loc, nil
}

// PersonaConfig is the persona section: who anima is.
type PersonaConfig struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"` // character notes given to the model
	Apology     string `yaml:"apology"`     // sent when a reply cannot be produced
}

// BrainConfig is the brain section.
type BrainConfig struct {
	Tick Duration `yaml:"tick"` // how often the core loop wakes, 10ms–1m
}

// LogConfig is the log section.
type LogConfig struct {
	Level       string `yaml:"level"`        // debug, info, warn or error
	Format      string `yaml:"format"`       // text or json
	MessageText bool   `yaml:"message_text"` // log message texts; for debugging only
}

// SlogLevel returns Level as a slog.Level; an invalid level (rejected by Validate) is info.
func (l LogConfig) SlogLevel() slog.Level {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.Level)); err != nil {
		return slog.LevelInfo
	}
	return lvl
}

// Default returns the built-in configuration. Load decodes the file over it, so a
// key missing from the file keeps its default. Secrets are empty and
// telegram.allowed_users is empty.
func Default() Config {
	return Config{
		Telegram: TelegramConfig{
			APIURL: "https://api.telegram.org",
			Mode:   ModePolling,
			Webhook: WebhookConfig{
				Listen: "127.0.0.1:8443",
				Path:   "/telegram",
			},
		},
		LLM: LLMConfig{
			BaseURL:             "https://api.openai.com/v1",
			FastModel:           "gpt-4o-mini",
			SmartModel:          "gpt-4o",
			RequestTimeout:      Duration(60 * time.Second),
			ConfidenceThreshold: 0.6,
			ContextTokens:       6000,
			MaxOutputTokens:     800,
		},
		Storage: StorageConfig{Path: "./data/anima.db"},
		Metrics: MetricsConfig{Listen: "127.0.0.1:9464"},
		Proactive: ProactiveConfig{
			Enabled:       true,
			MinSilence:    Duration(6 * time.Hour),
			Cooldown:      Duration(3 * time.Hour),
			FollowupAfter: Duration(20 * time.Minute),
			QuietHours:    "22:30-08:30",
			MaxPerDay:     2,
		},
		User: UserConfig{Timezone: "UTC"},
		Persona: PersonaConfig{
			Name: "Anima",
			Description: "A warm, curious companion. Remembers what the person shares and " +
				"asks about it later; asks one thoughtful question at a time; celebrates small " +
				"wins and sits with hard days without rushing to fix them. Speaks plainly and " +
				"briefly, in the person's own language, with gentle humour. Honest about being " +
				"an AI, never pretends to have done things it has not, and never lectures.",
			Apology: "Sorry — my thoughts got tangled just now. Could you say that again in a minute?",
		},
		Brain: BrainConfig{Tick: Duration(time.Second)},
		Log:   LogConfig{Level: "info", Format: "text"},
	}
}

// Load reads the YAML file at path and returns it decoded over Default() and
// validated; see Parse. Each error is prefixed with path.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return Config{}, prefixErrors(path, err)
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
// Unknown keys, duplicate keys and values of the wrong type are errors naming the
// full key and its line. All problems are returned together (errors.Join); each
// is a *KeyError unless the YAML itself does not parse.
func Parse(data []byte) (Config, error) {
	return parse(data, os.LookupEnv)
}

func parse(data []byte, lookup func(string) (string, bool)) (Config, error) {
	cfg := Default()
	data, restore := shield(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return cfg, joinKeyErrors(cfg.validate())
	case err != nil:
		return Config{}, fmt.Errorf("parse YAML: %w", err)
	case len(doc.Content) == 0:
		return cfg, joinKeyErrors(cfg.validate())
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return Config{}, fmt.Errorf("parse YAML: %w", err)
		}
		return Config{}, &KeyError{Line: extra.Line, Msg: "a second YAML document; keep the whole configuration in one"}
	}

	w := walker{lookup: lookup, restore: restore, lines: map[string]int{}, expanded: map[*yaml.Node]bool{}}
	w.section(doc.Content[0], reflect.TypeFor[Config](), "")
	if len(w.errs) > 0 {
		return Config{}, joinKeyErrors(w.errs)
	}
	// The walk above is the strict check (yaml's own KnownFields does not apply to
	// Node.Decode and cannot name the full key); this fills in the values.
	if err := doc.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("decode config: %w", err)
	}
	problems := cfg.validate()
	for _, p := range problems {
		p.Line = w.lines[p.Key]
	}
	if len(problems) > 0 {
		return Config{}, joinKeyErrors(problems)
	}
	return cfg, nil
}

// A KeyError is one problem with one configuration key.
type KeyError struct {
	Key  string // full dotted key, e.g. "llm.fast_model"; "" for the document itself
	Line int    // 1-based line in the YAML, 0 when unknown
	Msg  string // what is wrong and what is allowed
}

func (e *KeyError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
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

// walker checks a YAML node tree against the Config struct: every key known and
// set once, every value decodable into its field. It expands ${VAR} references in
// place and records the line of each key.
type walker struct {
	lookup   func(string) (string, bool)
	restore  *strings.Replacer // undoes shield
	lines    map[string]int    // full key -> line
	expanded map[*yaml.Node]bool
	errs     []*KeyError
}

func (w *walker) fail(n *yaml.Node, key, format string, args ...any) {
	w.errs = append(w.errs, &KeyError{Key: key, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
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
		if k.Kind != yaml.ScalarNode {
			w.fail(k, prefix, "keys must be plain names; allowed keys: %s", strings.Join(names, ", "))
			continue
		}
		key := join(prefix, w.restore.Replace(k.Value))
		if first, dup := seen[k.Value]; dup {
			w.fail(k, key, "set twice (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fieldByYAMLName(t, k.Value)
		if !ok {
			w.fail(k, key, "unknown key%s", suggest(w.restore.Replace(k.Value), names, prefix))
			continue
		}
		w.lines[key] = k.Line
		if f.Type.Kind() == reflect.Struct {
			w.section(v, f.Type, key)
			continue
		}
		w.leaf(v, f.Type, key)
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
		v, err := expandEnv(raw, w.lookup)
		if err != nil {
			w.fail(n, key, "%s", err.Error())
			return
		}
		n.Value = v
		if n.Style == 0 {
			n.Tag = "" // plain scalar: resolve the type of the expanded text, as if written so
		}
	default:
		for _, c := range n.Content {
			w.expand(c, key)
		}
	}
}

// shield replaces each ${...} reference in data with a placeholder that is a
// plain YAML scalar in any context, so that references also work unquoted in
// flow style ([${ID}], {token: ${T}}) and a "#" in a default is not a comment.
// The returned Replacer turns placeholders back into the references.
func shield(data []byte) ([]byte, *strings.Replacer) {
	prefix := "animaenv"
	for bytes.Contains(data, []byte(prefix)) {
		prefix += "x"
	}
	var out []byte
	var pairs []string
	for {
		i := bytes.Index(data, []byte("${"))
		if i < 0 {
			break
		}
		end := bytes.IndexAny(data[i:], "}\n")
		if (i > 0 && data[i-1] == '$') || end < 0 || data[i+end] != '}' {
			// "$${" escape or no "}" on this line: leave it for expandEnv to judge.
			out = append(out, data[:i+2]...)
			data = data[i+2:]
			continue
		}
		token := prefix + strconv.Itoa(len(pairs)/2) + "z"
		pairs = append(pairs, token, string(data[i:i+end+1]))
		out = append(out, data[:i]...)
		out = append(out, token...)
		data = data[i+end+1:]
	}
	if pairs == nil {
		return append(out, data...), strings.NewReplacer()
	}
	return append(out, data...), strings.NewReplacer(pairs...)
}

// expandEnv expands ${NAME} and ${NAME:-default} in s; "$${" is a literal "${".
func expandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i]) // keeps one "$" of "$${"
			b.WriteString("{")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated %q: want ${NAME} or ${NAME:-default}", s[i:])
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("bad variable reference %q: want ${NAME} or ${NAME:-default}, NAME of A-Z a-z 0-9 _", s[i:i+end+1])
		}
		if v, ok := lookup(name); ok && (v != "" || !hasDef) {
			b.WriteString(v)
		} else {
			b.WriteString(def)
		}
		s = s[i+end+1:]
	}
}

func validEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
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
	best, bestDist := "", 3 // suggest only within an edit distance of 2
	for _, n := range names {
		if d := editDistance(key, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	if section == "" {
		return "; the sections are " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("; %s accepts %s", section, strings.Join(names, ", "))
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
	case reflect.TypeFor[QuietHours]():
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

// Validate reports every problem with c, joined with errors.Join; each is a
// *KeyError naming the full key and what is allowed. It does not require secrets
// or allowed users; ValidateRun does.
func (c Config) Validate() error {
	return joinKeyErrors(c.validate())
}

// ValidateRun reports the problems Validate does plus those that matter only when
// anima connects to Telegram: a missing token and an empty allow-list. `anima chat`
// does not need them.
func (c Config) ValidateRun() error {
	p := c.validate()
	if c.Telegram.Token == "" {
		p = append(p, &KeyError{Key: "telegram.token", Msg: "is empty: set ANIMA_TELEGRAM_TOKEN or telegram.token"})
	}
	if len(c.Telegram.AllowedUsers) == 0 && !c.Telegram.Public {
		p = append(p, &KeyError{Key: "telegram.allowed_users",
			Msg: "is empty: list the Telegram user ids allowed to talk to anima, or set telegram.public: true"})
	}
	return joinKeyErrors(p)
}

type checker []*KeyError

func (c *checker) add(key, format string, args ...any) {
	*c = append(*c, &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) oneOf(key, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		c.add(key, "must be one of %s; got %q", strings.Join(allowed, ", "), v)
	}
}

func (c *checker) httpURL(key, v string, httpsOnly bool) {
	u, err := url.Parse(v)
	ok := err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http" && !httpsOnly)
	switch {
	case ok:
	case httpsOnly:
		c.add(key, "must be an https:// URL such as https://bot.example.com/telegram; got %q", v)
	default:
		c.add(key, "must be an http:// or https:// URL; got %q", v)
	}
}

func (c *checker) listen(key, v, example string) {
	_, port, err := net.SplitHostPort(v)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
		c.add(key, "must be host:port such as %s; got %q", example, v)
	}
}

func (c *checker) positive(key string, d Duration) {
	if d <= 0 {
		c.add(key, "must be a duration greater than 0 such as \"90s\" or \"6h\"; got %s", d)
	}
}

func (c *checker) notEmpty(key, v string) {
	if strings.TrimSpace(v) == "" {
		c.add(key, "must not be empty")
	}
}

func (c Config) validate() []*KeyError {
	var p checker

	t := c.Telegram
	p.httpURL("telegram.api_url", t.APIURL, false)
	p.oneOf("telegram.mode", t.Mode, ModePolling, ModeWebhook)
	p.listen("telegram.webhook.listen", t.Webhook.Listen, "127.0.0.1:8443")
	if !strings.HasPrefix(t.Webhook.Path, "/") {
		p.add("telegram.webhook.path", "must start with \"/\", e.g. /telegram; got %q", t.Webhook.Path)
	}
	if t.Webhook.PublicURL != "" {
		p.httpURL("telegram.webhook.public_url", t.Webhook.PublicURL, true)
	}
	switch secret := t.Webhook.SecretToken; {
	case t.Mode != ModeWebhook:
	case secret == "":
		p.add("telegram.webhook.secret_token", "is required in webhook mode: set ANIMA_WEBHOOK_SECRET "+
			"to 1–256 characters of A-Z a-z 0-9 _ -")
	case !validSecretToken(string(secret)):
		p.add("telegram.webhook.secret_token", "must be 1–256 characters of A-Z a-z 0-9 _ -; "+
			"the value set (%d bytes) is too long or has other characters", len(secret))
	}
	for i, id := range t.AllowedUsers {
		if id <= 0 {
			p.add("telegram.allowed_users", "entry %d is %d: Telegram user ids are positive integers", i+1, id)
		}
	}

	l := c.LLM
	p.httpURL("llm.base_url", l.BaseURL, false)
	p.notEmpty("llm.fast_model", l.FastModel)
	p.notEmpty("llm.smart_model", l.SmartModel)
	p.positive("llm.request_timeout", l.RequestTimeout)
	if !(l.ConfidenceThreshold >= 0 && l.ConfidenceThreshold <= 1) {
		p.add("llm.confidence_threshold", "must be between 0 and 1; got %v", l.ConfidenceThreshold)
	}
	if l.DailyTokenBudget < 0 {
		p.add("llm.daily_token_budget", "must be 0 (unlimited) or more; got %d", l.DailyTokenBudget)
	}
	if l.ContextTokens < 500 {
		p.add("llm.context_tokens", "must be at least 500; got %d", l.ContextTokens)
	}
	if l.MaxOutputTokens <= 0 {
		p.add("llm.max_output_tokens", "must be greater than 0; got %d", l.MaxOutputTokens)
	}

	p.notEmpty("storage.path", c.Storage.Path)
	if c.Metrics.Listen != "" {
		p.listen("metrics.listen", c.Metrics.Listen, "127.0.0.1:9464 (or \"\" to disable)")
	}

	pr := c.Proactive
	p.positive("proactive.min_silence", pr.MinSilence)
	p.positive("proactive.cooldown", pr.Cooldown)
	p.positive("proactive.followup_after", pr.FollowupAfter)
	if _, _, _, err := pr.QuietHours.parse(); err != nil {
		p.add("proactive.quiet_hours", "%s", err.Error())
	}
	if pr.MaxPerDay < 0 {
		p.add("proactive.max_per_day", "must be 0 or more; got %d", pr.MaxPerDay)
	}

	switch tz := c.User.Timezone; {
	case tz == "" || tz == "Local":
		p.add("user.timezone", "must be an IANA time zone such as Europe/Berlin or UTC; got %q", tz)
	default:
		if _, err := time.LoadLocation(tz); err != nil {
			p.add("user.timezone", "unknown time zone %q: use an IANA name such as Europe/Berlin or UTC", tz)
		}
	}

	p.notEmpty("persona.name", c.Persona.Name)
	p.notEmpty("persona.apology", c.Persona.Apology)

	if tick := c.Brain.Tick; tick < Duration(10*time.Millisecond) || tick > Duration(time.Minute) {
		p.add("brain.tick", "must be between 10ms and 1m; got %s", tick)
	}

	p.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	p.oneOf("log.format", c.Log.Format, "text", "json")
	return p
}

func validSecretToken(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Redacted returns c as YAML with every secret (telegram.token, llm.api_key,
// telegram.webhook.secret_token) shown as "[redacted]", or "" when unset.
func (c Config) Redacted() string {
	out, err := yaml.Marshal(c)
	if err != nil {
		return "# config cannot be printed: " + err.Error() + "\n"
	}
	return string(out)
}

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

// QuietHours is a daily window "HH:MM-HH:MM" in the user's time zone, e.g.
// "22:30-08:30"; it may wrap midnight, and "" means none. The start is inside
// the window, the end is not.
type QuietHours string

// Offsets returns the window as offsets from local midnight. ok is false when q
// is empty or malformed; Validate rejects malformed values, so for a validated
// Config ok=false means there are no quiet hours. start > end when the window
// wraps midnight.
func (q QuietHours) Offsets() (start, end time.Duration, ok bool) {
	start, end, ok, err := q.parse()
	return start, end, ok && err == nil
}

// Contains reports whether the wall-clock time of t falls in the window. t must
// already be in the user's time zone.
func (q QuietHours) Contains(t time.Time) bool {
	start, end, ok := q.Offsets()
	if !ok {
		return false
	}
	h, m, s := t.Clock()
	at := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second
	if start < end {
		return at >= start && at < end
	}
	return at >= start || at < end
}

func (q QuietHours) parse() (start, end time.Duration, ok bool, err error) {
	if q == "" {
		return 0, 0, false, nil
	}
	a, b, found := strings.Cut(string(q), "-")
	if !found {
		return 0, 0, false, fmt.Errorf(`must be "HH:MM-HH:MM" such as "22:30-08:30", or "" for none; got %q`, string(q))
	}
	if start, err = clockOffset(a); err == nil {
		end, err = clockOffset(b)
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf(`must be "HH:MM-HH:MM" such as "22:30-08:30", or "" for none; got %q: %w`, string(q), err)
	}
	if start == end {
		return 0, 0, false, fmt.Errorf("start and end are both %s; use \"\" for no quiet hours", a)
	}
	return start, end, true, nil
}

// digits2 returns the value of a two-digit decimal string, or -1.
func digits2(s string) int {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}

// clockOffset parses "HH:MM" (00:00–23:59) as an offset from midnight.
func clockOffset(s string) (time.Duration, error) {
	hh, mm, found := strings.Cut(s, ":")
	if !found {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	h, m := digits2(hh), digits2(mm)
	if h < 0 || h > 23 || m < 0 || m > 59 {
		return 0, fmt.Errorf("%q is not a time between 00:00 and 23:59", s)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}
