package config

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

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

// EnvDefaults are the environment variables that stand in for a key the file leaves out:
// each is read when the file does not set its key (or writes it with no value, "key:").
// A value written in the file wins, "" included (metrics.listen: "" disables the
// server), and so does a ${VAR} reference written for the key, even one that expands to
// nothing: the file said where the value comes from.
var EnvDefaults = []struct{ Env, Key string }{
	{"ANIMA_TELEGRAM_TOKEN", "telegram.token"},
	{"ANIMA_LLM_API_KEY", "llm.api_key"},
	{"ANIMA_STORAGE_PATH", "storage.path"},
	{"ANIMA_METRICS_LISTEN", "metrics.listen"},
	{"ANIMA_WEBHOOK_SECRET", "telegram.webhook.secret_token"},
}

// envDefaultField returns the field of cfg that key names, for EnvDefaults.
func envDefaultField(cfg *Config, key string) *string {
	switch key {
	case "telegram.token":
		return (*string)(&cfg.Telegram.Token)
	case "llm.api_key":
		return (*string)(&cfg.LLM.APIKey)
	case "storage.path":
		return &cfg.Storage.Path
	case "metrics.listen":
		return &cfg.Metrics.Listen
	case "telegram.webhook.secret_token":
		return (*string)(&cfg.Telegram.Webhook.SecretToken)
	}
	panic("config: no field for env default " + key)
}

// applyEnvDefaults sets each EnvDefaults key the file did not set from its variable, when
// that is set and not empty. written reports whether the file set key (with a value) and
// whether it did so with a ${VAR} reference.
func applyEnvDefaults(cfg *Config, lookup func(string) (string, bool), written func(key string) (set, ref bool)) {
	for _, d := range EnvDefaults {
		v, ok := lookup(d.Env)
		if !ok || v == "" {
			continue
		}
		if set, ref := written(d.Key); set || ref {
			continue
		}
		*envDefaultField(cfg, d.Key) = v
	}
}
