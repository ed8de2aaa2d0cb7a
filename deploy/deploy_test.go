package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// compose is the part of compose.yaml the tests read.
type compose struct {
	Services map[string]struct {
		Image       string   `yaml:"image"`
		Build       any      `yaml:"build"`
		Command     []string `yaml:"command"`
		Volumes     []string `yaml:"volumes"`
		Environment any      `yaml:"environment"` // a list of NAME=VALUE or a map
		Secrets     []string `yaml:"secrets"`
		Init        *bool    `yaml:"init"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
	Secrets map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

func decodeYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// mounts returns a service's bind mounts (source relative to this folder → target) and
// its named volumes.
func mounts(t *testing.T, vols []string) (binds map[string]string, named []string) {
	t.Helper()
	binds = map[string]string{}
	for _, v := range vols {
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			t.Errorf("volume %q is not source:target", v)
			continue
		}
		if strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "/") {
			binds[parts[0]] = parts[1]
			continue
		}
		named = append(named, parts[0])
	}
	return binds, named
}

// TestComposeMounts: compose.yaml decodes, starts anima (built from the repository),
// Prometheus and Grafana, and every file or folder it mounts exists; named volumes are
// declared.
func TestComposeMounts(t *testing.T) {
	var c compose
	decodeYAML(t, "compose.yaml", &c)
	for _, name := range []string{"anima", "prometheus", "grafana"} {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("compose.yaml lacks the %s service", name)
		}
	}
	if c.Services["anima"].Build == nil {
		t.Error("compose.yaml's anima is not built from the repository")
	}
	for name, s := range c.Services {
		binds, named := mounts(t, s.Volumes)
		for src, target := range binds {
			if _, err := os.Stat(filepath.FromSlash(src)); err != nil {
				t.Errorf("service %s mounts %s at %s: %v", name, src, target, err)
			}
		}
		for _, v := range named {
			if _, ok := c.Volumes[v]; !ok {
				t.Errorf("service %s uses the volume %s, which compose.yaml does not declare", name, v)
			}
		}
	}
}

// TestStackWiring: Prometheus loads the shipped rules and scrapes anima's metrics port,
// Grafana's provisioning points at the folder compose mounts the dashboard in, and the
// dashboard exists in one copy.
func TestStackWiring(t *testing.T) {
	var c compose
	decodeYAML(t, "compose.yaml", &c)
	promBinds, _ := mounts(t, c.Services["prometheus"].Volumes)
	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	decodeYAML(t, filepath.Join("prometheus", "prometheus.yml"), &prom)
	if !slices.Contains(c.Services["prometheus"].Command, "--config.file="+promBinds["./prometheus/prometheus.yml"]) {
		t.Errorf("Prometheus is not started with the mounted prometheus.yml (%v)", c.Services["prometheus"].Command)
	}
	for _, r := range prom.RuleFiles {
		if _, err := os.Stat(filepath.Join("prometheus", r)); err != nil {
			t.Errorf("prometheus.yml loads %s: %v", r, err)
		}
		if !slices.Contains(slices.Collect(maps.Values(promBinds)), "/etc/prometheus/"+r) {
			t.Errorf("prometheus.yml loads %s, which compose.yaml does not mount in /etc/prometheus", r)
		}
	}
	if !slices.Contains(prom.RuleFiles, "alerts.yml") {
		t.Error("prometheus.yml does not load alerts.yml")
	}
	if len(prom.ScrapeConfigs) != 1 || prom.ScrapeConfigs[0].JobName != "anima" ||
		len(prom.ScrapeConfigs[0].StaticConfigs) != 1 ||
		!slices.Equal(prom.ScrapeConfigs[0].StaticConfigs[0].Targets, []string{"anima:9464"}) {
		t.Errorf("prometheus.yml should scrape job anima at anima:9464 (the image's ANIMA_METRICS_LISTEN): %+v", prom.ScrapeConfigs)
	}
	dockerfile, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), "ANIMA_METRICS_LISTEN=0.0.0.0:9464") {
		t.Error("the Dockerfile no longer listens on 0.0.0.0:9464, which prometheus.yml scrapes")
	}

	grafBinds, _ := mounts(t, c.Services["grafana"].Volumes)
	var provider struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	decodeYAML(t, filepath.Join("grafana", "provisioning", "dashboards", "anima.yaml"), &provider)
	if len(provider.Providers) != 1 || grafBinds["./grafana/dashboards"] != provider.Providers[0].Options.Path {
		t.Errorf("Grafana loads dashboards from %+v, compose mounts them at %q", provider.Providers, grafBinds["./grafana/dashboards"])
	}
	if grafBinds["./grafana/provisioning"] != "/etc/grafana/provisioning" {
		t.Errorf("compose mounts the provisioning at %q, Grafana reads /etc/grafana/provisioning", grafBinds["./grafana/provisioning"])
	}
	raw, err := os.ReadFile(filepath.Join("grafana", "dashboards", "anima.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(raw) {
		t.Error("grafana/dashboards/anima.json is not JSON")
	}
	var copies []string
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".json") && !d.IsDir() {
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), `"uid": "anima"`) {
				copies = append(copies, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(copies) != 1 {
		t.Errorf("the dashboard should exist once, in deploy/grafana/dashboards; found %v", copies)
	}
}

// TestComposeReadsInitsFile: the stack mounted the example config.yaml, not the file
// `anima init` writes. anima gets init's anima.yaml (git ignores it: it holds the token)
// as a secret, and ANIMA_CONFIG points every command in the container at it.
func TestComposeReadsInitsFile(t *testing.T) {
	var c compose
	decodeYAML(t, "compose.yaml", &c)
	anima := c.Services["anima"]
	if !slices.Equal(anima.Secrets, []string{"anima.yaml"}) {
		t.Fatalf("anima's secrets are %q, want [anima.yaml]", anima.Secrets)
	}
	if got, want := c.Secrets["anima.yaml"].File, "${ANIMA_CONFIG_FILE:-../anima.yaml}"; got != want {
		t.Errorf("the secret anima.yaml is read from %q, want %q (init's file in the repository's root)", got, want)
	}
	var env []string
	switch e := anima.Environment.(type) {
	case []any:
		for _, v := range e {
			env = append(env, fmt.Sprint(v))
		}
	case map[string]any:
		for k, v := range e {
			env = append(env, k+"="+fmt.Sprint(v))
		}
	}
	if !slices.Contains(env, "ANIMA_CONFIG=/run/secrets/anima.yaml") {
		t.Errorf("anima's environment %q does not point ANIMA_CONFIG at the secret, /run/secrets/anima.yaml", env)
	}
	ignore, err := os.ReadFile(filepath.Join("..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ignore), "\n"), "/anima.yaml") {
		t.Error(".gitignore does not ignore /anima.yaml, which holds the token")
	}
	for _, v := range anima.Volumes {
		if strings.Contains(v, "config.yaml") {
			t.Errorf("anima still mounts the example configuration: %s", v)
		}
	}
}

// TestComposeRunsAnimaUnderInit: under Docker anima was PID 1 (issue 33), which reaps no
// orphan (an MCP server's child left running becomes a zombie for the container's life).
// The stack runs it under Docker's init, and every docker run in the README and docs/
// passes --init.
func TestComposeRunsAnimaUnderInit(t *testing.T) {
	var c compose
	decodeYAML(t, "compose.yaml", &c)
	if in := c.Services["anima"].Init; in == nil || !*in {
		t.Error("compose.yaml's anima does not set init: true; anima would be PID 1")
	}
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	for _, doc := range append(docs, filepath.Join("..", "README.md")) {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(raw)) {
			if strings.Contains(line, "docker run ") && !strings.Contains(line, "docker run --init") && !strings.Contains(line, "docker run -d --init") {
				t.Errorf("%s: a docker run without --init: %s", doc, strings.TrimSpace(line))
			}
		}
	}
}

// TestDocsExecNamesAContainer: docs/deploy.md's backup line was `docker exec anima …`,
// which finds no container under compose: compose names it <project>-<service>-1
// (issue 36). Every `docker exec NAME` must name a container a `docker run --name` of
// the docs starts, every `docker compose … exec SERVICE` a service of compose.yaml, and
// the backup is given for compose too.
func TestDocsExecNamesAContainer(t *testing.T) {
	doc, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ") // lines joined: a command may wrap
	named := map[string]bool{}
	for _, part := range strings.Split(text, "docker run ")[1:] {
		f := strings.Fields(part)
		for i := 0; i+1 < len(f) && strings.HasPrefix(f[i], "-"); i++ {
			if f[i] == "--name" {
				named[f[i+1]] = true
				break
			}
		}
	}
	for _, part := range strings.Split(text, "docker exec ")[1:] {
		if name := strings.Fields(part)[0]; !named[name] {
			t.Errorf("docs/deploy.md: docker exec %s: no docker run --name %s in the docs (compose's container is <project>-<service>-1)", name, name)
		}
	}
	backup := false
	for _, part := range strings.Split(text, "docker compose -f deploy/compose.yaml exec ")[1:] {
		f := strings.Fields(strings.Trim(part, "`"))
		if _, ok := c.Services[f[0]]; !ok {
			t.Errorf("docs/deploy.md: compose exec %s: compose.yaml has no such service", f[0])
		}
		backup = backup || len(f) > 2 && f[1] == "/anima" && f[2] == "backup"
	}
	if !backup {
		t.Error("docs/deploy.md gives no backup under compose (docker compose -f deploy/compose.yaml exec SERVICE /anima backup …)")
	}
}
