package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocumentedCommandsParse: every anima command line written in the README and docs/
// (a code block's line that starts with `anima`, `$ anima`, `bin/anima` or `go run
// ./cmd/anima`, and every inline `anima …` span) goes through the real parser and is
// accepted. `anima backup config.yaml --out anima-backup.db`, the README's own form, was
// refused: "one configuration file, not 3 arguments" (issue 36).
func TestDocumentedCommandsParse(t *testing.T) {
	t.Setenv("ANIMA_CONFIG", "") // the lines name their files, or take the rule's
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	seen := 0
	for _, file := range files {
		for _, c := range documentedCommands(t, file) {
			seen++
			t.Run(c.where, func(t *testing.T) {
				if code, stderr := parseOnly(c.args); code != 0 {
					t.Errorf("%s: %q refused (exit %d):\n%s", c.where, c.line, code, stderr)
				}
			})
		}
	}
	if seen < 40 {
		t.Errorf("found %d documented command lines, want the README's and docs' (40 or more)", seen)
	}
}

// parseOnly runs the parser of `anima ARGS` without running the command: 0 when it
// accepts the line (its --help counts: it parsed every flag before it).
func parseOnly(args []string) (code int, stderr string) {
	var errOut strings.Builder
	if len(args) > 0 && args[0] == "init" {
		// init parses and runs in one function (init.go): a --help after every argument
		// given exits 0 only if all of them parsed, and 2 on a flag or argument it refuses.
		return initCommand(append(args[1:], "--help"), strings.NewReader(""), io.Discard, &errOut), errOut.String()
	}
	_, code, ok := parse(args, strings.NewReader(""), io.Discard, &errOut)
	if ok {
		code = 0
	}
	return code, errOut.String()
}

type documented struct {
	where, line string
	args        []string
}

var (
	inlineCommand = regexp.MustCompile("`((?:\\$ )?anima [^`]+)`")
	// placeholders stand for a value in a synopsis: anima sim [FILE] [--days N].
	brackets     = strings.NewReplacer("[", "", "]", "", "…", "")
	placeholders = strings.NewReplacer(" N ", " 3 ", " D ", " 1s ", " ID ", " 7 ", " F ", " f.db ", " S ", " s.yaml ", " DIR ", " out/ ")
	// notCommands are inline spans that name a command or quote a log line rather than
	// give a command line.
	notCommands = map[string]bool{
		"anima sim --scenario":              true, // the mode, as a heading
		"anima bench memory":                true, // the command, as a title
		"anima started":                     true, // a log line
		"anima registers public_url + path": true, // prose
	}
	prefixes = []string{"$ anima ", "anima ", "bin/anima ", "go run ./cmd/anima "}
)

// documentedCommands returns the anima command lines written in the markdown file.
func documentedCommands(t *testing.T, file string) []documented {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []documented
	add := func(n int, line string) {
		for _, part := range regexp.MustCompile(`\s*(?:&&|\|\||;)\s*`).Split(line, -1) {
			part = strings.TrimSpace(part)
			if notCommands[part] {
				continue
			}
			if i := strings.Index(part, " #"); i >= 0 { // a shell comment
				part = part[:i]
			}
			if i := strings.IndexAny(part, "|><"); i >= 0 { // a pipe or redirection
				part = part[:i]
			}
			for _, p := range prefixes {
				if strings.HasPrefix(part, p) {
					args := strings.Fields(placeholders.Replace(" " + brackets.Replace(strings.TrimPrefix(part, p)) + " "))
					if len(args) == 0 || args[0] == "COMMAND" || strings.HasSuffix(args[0], "-") {
						continue // anima COMMAND --help, anima-sim
					}
					for i, a := range args {
						args[i] = strings.Trim(a, `'"`)
					}
					out = append(out, documented{where: filepath.Base(file) + ":" + strconv.Itoa(n), line: part, args: args})
					break
				}
			}
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	fenced := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") && !strings.HasPrefix(trimmed, "-") && !strings.HasPrefix(trimmed, "|") {
			add(n, trimmed)
			continue
		}
		for _, m := range inlineCommand.FindAllStringSubmatch(line, -1) {
			add(n, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
