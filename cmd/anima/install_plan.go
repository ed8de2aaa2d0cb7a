package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/deploy/systemd"
)

// layout is where the unit expects each thing, read from the unit itself: the binary
// (ExecStart=), the configuration (LoadCredential='s source, or $ANIMA_CONFIG) and the
// store ($ANIMA_STORAGE_PATH), as the service sees them.
type layout struct {
	unit, unitText      string // the unit file and its contents
	bin, config, store  string
	configDir, storeDir os.FileMode
}

// layout reads the unit this installer installs.
func (in *installer) layout() (layout, error) {
	l := layout{unit: "/etc/systemd/system/anima.service", unitText: systemd.SystemUnit, configDir: 0o700, storeDir: 0o700}
	if !in.system {
		l.unit, l.unitText = filepath.Join(in.home, ".config/systemd/user/anima.service"), systemd.UserUnit
	}
	keys := unitKeys(strings.ReplaceAll(l.unitText, "%h", in.home))
	for _, v := range keys["Environment"] {
		name, value, _ := strings.Cut(v, "=")
		switch name {
		case "ANIMA_STORAGE_PATH":
			l.store = value
		case "ANIMA_CONFIG":
			l.config = value
		}
	}
	if c := keys["LoadCredential"]; len(c) == 1 {
		if name, source, ok := strings.Cut(c[0], ":"); ok && name == credentialName {
			l.config = source
		}
	}
	if e := keys["ExecStart"]; len(e) == 1 {
		l.bin, _, _ = strings.Cut(e[0], " ")
	}
	if l.bin == "" || l.config == "" || l.store == "" {
		return l, fmt.Errorf("the unit %s does not say where the binary, the configuration and the store go (a bug in anima)", l.unit)
	}
	return l, nil
}

// unitKeys returns the values of each key of a unit's [Service] section, in order.
func unitKeys(text string) map[string][]string {
	keys := map[string][]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = line
		case section == "[Service]":
			if k, v, ok := strings.Cut(line, "="); ok {
				keys[k] = append(keys[k], v)
			}
		}
	}
	return keys
}

// install puts anima in service from the configuration at path.
func (in *installer) install(ctx context.Context, path string) error {
	l, err := in.layout()
	if err != nil {
		return err
	}
	cfg, err := config.Check(path, false)
	if err != nil {
		return fmt.Errorf("%w (anima install takes the file anima init wrote; `anima check` says what to fix)", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if raw, err = storeIn(raw, l.store); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	shown := string(raw)
	for secret, mask := range map[string]string{cfg.Telegram.Token.Reveal(): "[the token, hidden]", cfg.LLM.APIKey.Reveal(): "[the key, hidden]"} {
		if secret != "" {
			shown = strings.ReplaceAll(shown, secret, mask)
		}
	}
	kind := "the system unit (running as root)"
	if !in.system {
		kind = "a user unit for " + in.user + " (not root: systemctl --user)"
	}
	fmt.Fprintf(in.out, "Installing anima as %s from %s:\n", kind, path)
	steps := []step{
		{say: fmt.Sprintf("copy %s (this binary) to %s, mode 0755", in.exe, l.bin), do: func(context.Context) error {
			b, err := os.ReadFile(in.exe)
			if err != nil {
				return fmt.Errorf("read %s: %w", in.exe, err)
			}
			return in.writeFile(l.bin, b, 0o755, 0o755)
		}},
		{say: fmt.Sprintf("write %s, mode 0600 (it holds the token and key): %s, its storage.path reading the unit's $ANIMA_STORAGE_PATH", l.config, path),
			show: shown, do: func(context.Context) error { return in.writeFile(l.config, raw, 0o600, l.configDir) }},
		in.storeStep(firstStore(cfg, path), l),
		{say: fmt.Sprintf("write %s, mode 0644", l.unit), show: l.unitText,
			do: func(context.Context) error { return in.writeFile(l.unit, []byte(l.unitText), 0o644, 0o755) }},
		in.command(in.systemctl("daemon-reload"), "systemd reads the unit"),
		in.command(in.systemctl("enable", "anima.service"), "it starts at boot"),
		in.command(in.systemctl("restart", "anima.service"), "it starts now, on this binary"),
	}
	if !in.system {
		steps = append(steps, in.command([]string{"loginctl", "enable-linger", in.user},
			"a user's services stop when their last session ends, unless the user lingers; lingering keeps anima running without a login "+
				"(undo: loginctl disable-linger "+in.user+")"))
	}
	steps = append(steps, in.health(l))
	if err := in.take(ctx, steps); err != nil {
		return err
	}
	fmt.Fprintf(in.out, "anima runs as a service: `%s status anima` shows it; `anima uninstall` takes it out again.\n", strings.Join(in.systemctl(), " "))
	if in.dryRun {
		fmt.Fprintln(in.out, "(--dry-run: nothing was done.)")
	}
	return nil
}

// firstStore is the store of the first conversation: storage.path as given, or, when
// relative, as config.ResolveStore reads it (beside the configuration, or where an
// older anima kept it).
func firstStore(cfg config.Config, configPath string) string {
	cfg.ResolveStore(configPath) // the rule every command follows: beside the file, else where it was
	if abs, err := filepath.Abs(cfg.Storage.Path); err == nil {
		return abs
	}
	return cfg.Storage.Path
}

// storeStep copies the first conversation's store to where the unit keeps it: a
// consistent copy (bot.Backup: through the control socket if `anima run` still serves
// it), left beside the original. A store already at the unit's place is the service's
// and is never replaced.
func (in *installer) storeStep(from string, l layout) step {
	mkdir := func(context.Context) error {
		if err := os.MkdirAll(filepath.Dir(in.at(l.store)), l.storeDir); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(l.store), err)
		}
		return nil
	}
	if in.system {
		mkdir = nil // systemd makes the StateDirectory= the service's own at each start
	}
	switch {
	case !exists(from):
		return step{say: fmt.Sprintf("no store at %s yet: the service starts a new one at %s", from, l.store), do: mkdir}
	case exists(in.at(l.store)):
		return step{say: fmt.Sprintf("keep the service's store at %s as it is (%s is not copied over it)", l.store, from)}
	}
	return step{say: fmt.Sprintf("copy the store of the first conversation, %s, to %s (mode 0600, its folder 0700); the original stays", from, l.store),
		do: func(ctx context.Context) error {
			if err := os.MkdirAll(filepath.Dir(in.at(l.store)), l.storeDir); err != nil {
				return fmt.Errorf("create %s: %w", filepath.Dir(l.store), err)
			}
			_, err := bot.Backup(ctx, from, in.at(l.store))
			return err
		}}
}

// storeIn returns the configuration raw with storage.path set to read
// $ANIMA_STORAGE_PATH, which the unit sets to store; a file that reads it already (as
// init's does) is returned as it is.
func storeIn(raw []byte, store string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a mapping of sections")
	}
	value := "${ANIMA_STORAGE_PATH:-" + store + "}"
	section := mapValue(doc.Content[0], "storage")
	if section == nil {
		section = &yaml.Node{Kind: yaml.MappingNode}
		doc.Content[0].Content = append(doc.Content[0].Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "storage"}, section)
	}
	path := mapValue(section, "path")
	switch {
	case path != nil && strings.Contains(path.Value, "${ANIMA_STORAGE_PATH"):
		return raw, nil
	case path != nil:
		path.Value, path.Style = value, 0
	default:
		section.Content = append(section.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "path"}, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b.Bytes(), nil
}

// mapValue is the value of key in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// uninstall takes anima out of service: stopped, disabled, its unit and binary removed.
// The configuration and the store stay, and it says where.
func (in *installer) uninstall(ctx context.Context) error {
	l, err := in.layout()
	if err != nil {
		return err
	}
	fmt.Fprintln(in.out, "Taking anima out of service:")
	disable := in.command(in.systemctl("disable", "--now", "anima.service"), "stop it, and not at boot")
	if !exists(in.at(l.unit)) && !in.dryRun {
		disable = step{say: fmt.Sprintf("no unit at %s: nothing to stop", l.unit)}
	}
	remove := func(path string) func(context.Context) error {
		return func(context.Context) error {
			if err := os.Remove(in.at(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", path, err)
			}
			return nil
		}
	}
	steps := []step{
		disable,
		{say: "remove " + l.unit, do: remove(l.unit)},
		in.command(in.systemctl("daemon-reload"), "systemd forgets the unit"),
		{say: "remove " + l.bin, do: remove(l.bin)},
	}
	if err := in.take(ctx, steps); err != nil {
		return err
	}
	store := l.store
	if in.system {
		store += " (systemd keeps a DynamicUser's state in /var/lib/private/anima; /var/lib/anima points there)"
	}
	fmt.Fprintf(in.out, "Left as they are: the store, %s, and the configuration, %s (it holds the token and key: remove it if you will not install again).\n", store, l.config)
	if !in.system {
		fmt.Fprintf(in.out, "Lingering stays on for %s (other services may need it): `loginctl disable-linger %s` ends it.\n", in.user, in.user)
	}
	if in.dryRun {
		fmt.Fprintln(in.out, "(--dry-run: nothing was done.)")
	}
	return nil
}
