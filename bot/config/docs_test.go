package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// configKeys returns the dotted key of every leaf of Config, as the decoder knows them.
func configKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		key := join(prefix, yamlName(f))
		if f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct {
			// A named section (mcp.servers.<name>): the map itself, and each entry's keys.
			keys = append(keys, key)
			keys = append(keys, configKeys(f.Type.Elem(), key+".<name>")...)
			continue
		}
		if f.Type.Kind() == reflect.Struct && !isText(f.Type) {
			keys = append(keys, configKeys(f.Type, key)...)
			continue
		}
		keys = append(keys, key)
	}
	return keys
}

// configDoc is the page that documents every key and environment variable (issue 36: the
// README's tables moved there, to keep the README short).
const configDoc = "../../docs/configuration.md"

// docKeys returns the keys docs/configuration.md's table documents: each row's
// first cell names one or more keys in backquotes; `a.b.*` covers every key under a.b,
// and a name without a dot ("`llm.fast_model` / `smart_model`") is a sibling of the
// cell's first key.
func docKeys(t *testing.T, doc string) (exact []string, prefixes []string) {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Keys\n")
	if !ok {
		t.Fatal("docs/configuration.md has no ## Keys section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	code := regexp.MustCompile("`([^`]+)`")
	rows := 0
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		rows++
		parent := ""
		for i, m := range code.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			if i == 0 {
				if j := strings.LastIndex(name, "."); j > 0 {
					parent = name[:j]
				}
			} else if !strings.Contains(name, ".") {
				name = join(parent, name)
			}
			if p, ok := strings.CutSuffix(name, ".*"); ok {
				prefixes = append(prefixes, p+".")
				continue
			}
			exact = append(exact, name)
		}
	}
	if rows == 0 {
		t.Fatal("docs/configuration.md's table of keys has no rows")
	}
	return exact, prefixes
}

// TestDocumentsEveryKey fails when a configuration key is missing from
// docs/configuration.md's table, or the table names a key the decoder does not know.
func TestDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	exact, prefixes := docKeys(t, string(raw))
	keys := configKeys(reflect.TypeFor[Config](), "")
	for _, k := range keys {
		// A named section's own key is covered by a row for its entries' keys.
		covered := func(p string) bool { return strings.HasPrefix(k, p) || strings.HasPrefix(p, k+".") }
		if !slices.Contains(exact, k) && !slices.ContainsFunc(prefixes, covered) {
			t.Errorf("docs/configuration.md's table of keys lacks %s", k)
		}
	}
	for _, k := range exact {
		if !slices.Contains(keys, k) {
			t.Errorf("docs/configuration.md's table of keys names %s, which is no configuration key", k)
		}
	}
	for _, p := range prefixes {
		if !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, p) }) {
			t.Errorf("docs/configuration.md's table of keys names %s*, which covers no configuration key", p)
		}
	}
}

// TestExampleHasEveryKey fails when config.yaml, the documented example, lacks a key or
// leaves one without a comment of its own or of its section.
func TestExampleHasEveryKey(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	commented := map[string]bool{}
	var walk func(n *yaml.Node, prefix string, inherited bool)
	walk = func(n *yaml.Node, prefix string, inherited bool) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := join(prefix, k.Value)
			c := inherited || k.HeadComment != "" || k.LineComment != ""
			if v.Kind == yaml.MappingNode && len(v.Content) > 0 {
				walk(v, key, c)
				continue
			}
			commented[key] = c
		}
	}
	walk(doc.Content[0], "", false)
	for _, k := range configKeys(reflect.TypeFor[Config](), "") {
		if strings.Contains(k, ".<name>.") {
			continue // a named section's entries: the example shows them in a comment
		}
		c, ok := commented[k]
		switch {
		case !ok:
			t.Errorf("config.yaml lacks %s", k)
		case !c:
			t.Errorf("config.yaml has %s without a comment saying what it does", k)
		}
	}
}

// codeEnv returns the ANIMA_ variables the Go code reads (EnvDefaults, and every
// os.Getenv or os.LookupEnv of a literal name) and those any of its string literals
// names (in an error, a flag's help, a template), from the non-test files under root.
func codeEnv(t *testing.T, root string) (read, named map[string][]string) {
	t.Helper()
	read, named = map[string][]string{}, map[string][]string{}
	for _, d := range EnvDefaults {
		read[d.Env] = append(read[d.Env], "config.EnvDefaults")
	}
	name := regexp.MustCompile(`ANIMA_[A-Z0-9_]+`)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "os" || (sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv") || len(n.Args) != 1 {
					return true
				}
				if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(v, "ANIMA_") {
						read[v] = append(read[v], fset.Position(lit.Pos()).String())
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					for _, v := range name.FindAllString(n.Value, -1) {
						named[v] = append(named[v], fset.Position(n.Pos()).String())
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return read, named
}

// docEnv returns the variables of docs/configuration.md's environment-variable table,
// each with its row's second cell.
func docEnv(t *testing.T, doc string) map[string]string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Environment variables\n")
	if !ok {
		t.Fatal("docs/configuration.md has no ## Environment variables section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	rows := map[string]string{}
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `ANIMA_") || len(cells) < 4 {
			continue
		}
		rows[strings.Trim(strings.TrimSpace(cells[1]), "`")] = cells[2]
	}
	if len(rows) == 0 {
		t.Fatal("docs/configuration.md's environment-variable table has no rows")
	}
	return rows
}

// TestEnvTable: an error said "set ANIMA_WEBHOOK_SECRET", which no code read (issue 26).
// Every ANIMA_ variable the code names is one it reads, docs/configuration.md's table
// lists exactly the variables the code reads, and a variable standing in for a key names
// that key in its row.
func TestEnvTable(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	table := docEnv(t, string(raw))
	read, named := codeEnv(t, "../..")
	for v, where := range named {
		if _, ok := read[v]; !ok {
			t.Errorf("%s is named at %s but no code reads it: add it to config.EnvDefaults or read it where it is named", v, where[0])
		}
	}
	for v, where := range read {
		if _, ok := table[v]; !ok {
			t.Errorf("docs/configuration.md's environment-variable table lacks %s, which the code reads (%s)", v, where[0])
		}
	}
	for v := range table {
		if _, ok := read[v]; !ok {
			t.Errorf("docs/configuration.md's environment-variable table lists %s, which no code reads", v)
		}
	}
	for _, d := range EnvDefaults {
		if row, ok := table[d.Env]; ok && !strings.Contains(row, "`"+d.Key+"`") {
			t.Errorf("docs/configuration.md's row for %s does not name its key `%s`: %s", d.Env, d.Key, row)
		}
	}
}
