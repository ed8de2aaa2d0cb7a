package shape

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// module is the import path of the repository's module.
const module = "github.com/anima-bot/anima"

// source is one parsed non-test Go file of the repository.
type source struct {
	path  string // slash-separated, relative to the repository root
	fset  *token.FileSet
	file  *ast.File
	lines int
}

// sources returns the repository's non-test Go files, parsed once for all the tests.
func sources(t *testing.T) []source {
	t.Helper()
	out, err := parsed()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// parsed parses every non-test Go file under the repository root (the parent of this
// package), skipping testdata and hidden directories.
var parsed = sync.OnceValues(func() ([]source, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	var out []source
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, source{path: filepath.ToSlash(rel), fset: fset, file: f, lines: fset.File(f.Pos()).LineCount()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk the repository: %w", err)
	}
	if len(out) < 100 {
		return nil, fmt.Errorf("found %d Go files under %s: not the repository's root?", len(out), root)
	}
	return out, nil
})

// offence is one file or function over its limit.
type offence struct {
	where string
	lines int
}

func report(t *testing.T, what string, limit int, offs []offence) {
	t.Helper()
	if len(offs) == 0 {
		return
	}
	slices.SortFunc(offs, func(a, b offence) int { return cmp.Or(b.lines-a.lines, strings.Compare(a.where, b.where)) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s over %d lines (cut them along their seams):\n", len(offs), what, limit)
	for _, o := range offs {
		fmt.Fprintf(&b, "\t%s: %d lines\n", o.where, o.lines)
	}
	t.Error(b.String())
}

func TestFileLines(t *testing.T) {
	t.Parallel()
	var offs []offence
	for _, s := range sources(t) {
		if s.lines > MaxFileLines {
			offs = append(offs, offence{s.path, s.lines})
		}
	}
	report(t, "non-test files", MaxFileLines, offs)
}

func TestFuncLines(t *testing.T) {
	t.Parallel()
	var offs []offence
	for _, s := range sources(t) {
		for _, d := range s.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := s.fset.Position(fn.Pos()), s.fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > MaxFuncLines {
				offs = append(offs, offence{fmt.Sprintf("%s:%d %s", s.path, start.Line, funcName(fn)), n})
			}
		}
	}
	report(t, "functions", MaxFuncLines, offs)
}

// funcName is fn's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// arrows are the imports that would point up or sideways: a package (a directory of the
// repository, its subdirectories not included) may import no package of the module under
// any of the forbidden directories.
var arrows = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"brain", []string{""}, "brain is the vocabulary: it imports no package of the module"},
	{"brain/ogg", []string{""}, "the Ogg reader is a leaf the fakes may import"},
	{"brain/provider", []string{"brain/", "bot", "channels", "storage", "plugins"}, "an endpoint's errors and breaker are a leaf over the vocabulary"},
	{"brain/speech", []string{"brain/cognition", "bot", "channels", "storage"}, "speech takes what it needs of cognition through its Meter; bot wires them"},
	{"brain/prompt", []string{"brain/cognition", "bot", "channels", "storage", "plugins"}, "the prompt takes what it needs of cognition through its Config and Offer; cognition calls Build"},
	{"storage", []string{"brain/", "bot", "channels", "plugins"}, "the store serialises the vocabulary, never an engine"},
	{"brain/memory", []string{"storage", "bot", "channels", "brain/loop"}, "memory owns its interfaces; bot checks that the store implements them"},
	{"brain/schedule", []string{"storage", "bot", "channels", "brain/loop"}, "schedule owns its interfaces; bot checks that the store implements them"},
	{"channels", []string{"brain/", "storage", "bot", "plugins"}, "a channel imports no engine"},
	{"channels/telegram", []string{"brain/", "storage", "bot", "plugins"}, "a channel imports no engine"},
	{"channels/console", []string{"brain/", "storage", "bot", "plugins"}, "a channel imports no engine"},
	{"plugins", []string{"bot", "channels", "storage"}, "a plugin imports nothing above it"},
	{"plugins/innerlife", []string{"bot", "channels", "storage"}, "a plugin imports nothing above it"},
	{"plugins/mcp", []string{"bot", "channels", "storage"}, "a plugin imports nothing above it"},
	{"plugins/setting", []string{"bot", "channels", "storage", "plugins", "brain/"}, "the sections' vocabulary is a leaf"},
}

func TestArrowsPointDown(t *testing.T) {
	t.Parallel()
	imports := map[string]map[string]bool{} // package directory → module packages it imports
	for _, s := range sources(t) {
		dir := filepath.ToSlash(filepath.Dir(s.path))
		for _, im := range s.file.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", s.path, im.Path.Value, err)
			}
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			if imports[dir] == nil {
				imports[dir] = map[string]bool{}
			}
			imports[dir][strings.TrimPrefix(strings.TrimPrefix(p, module), "/")] = true
		}
	}
	for _, a := range arrows {
		for _, p := range slices.Sorted(maps.Keys(imports[a.pkg])) {
			if slices.ContainsFunc(a.forbidden, func(f string) bool { return forbids(f, p) }) {
				t.Errorf("%s imports %s: %s", a.pkg, p, a.why)
			}
		}
	}
}

// forbids reports whether the forbidden directory f covers package p: "" covers every
// package, "x/" the packages under x, "x" x and the packages under it.
func forbids(f, p string) bool {
	switch {
	case f == "":
		return true
	case strings.HasSuffix(f, "/"):
		return strings.HasPrefix(p, f)
	default:
		return p == f || strings.HasPrefix(p, f+"/")
	}
}
