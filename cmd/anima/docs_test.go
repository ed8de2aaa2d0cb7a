package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
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
		if strings.HasPrefix(trimmed, "#") {
			continue // a heading names a command (## `anima dead`), it gives no command line
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

// TestREADMEShort: the README was 431 lines, with the configuration table and MCP's
// internals before how to set up Telegram (issue 36). It stays a read of five minutes: at
// most 150 lines, and right after the title and the introduction its first code block is
// still the two commands, the one that runs anima and the one that runs the tests
// (.ci/run runs the README's `make test`).
func TestREADMEShort(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	if n := len(strings.Split(strings.TrimSuffix(readme, "\n"), "\n")); n > 150 {
		t.Errorf("README.md has %d lines, more than 150: move the details to a page under docs/ and link it", n)
	}
	before, rest, ok := strings.Cut(readme, "\n```sh\n")
	if !ok {
		t.Fatal("README.md has no ```sh block")
	}
	if strings.Contains(before, "\n#") {
		t.Error("README.md has a heading before its first code block: the two commands come right after the introduction")
	}
	block, _, _ := strings.Cut(rest, "\n```")
	lines := strings.Split(block, "\n")
	want := []string{"go run ./cmd/anima init && go run ./cmd/anima run ", "make test "}
	if len(lines) != len(want) {
		t.Fatalf("README.md's first code block has %d lines, want the two commands:\n%s", len(lines), block)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("README.md's first code block, line %d: %q, want it to start %q", i+1, lines[i], w)
		}
	}
}

// TestDocLinks: every relative link in README.md and docs/*.md reaches a file or folder
// of the repository, and its #anchor a heading of that page (issue 36 moved the README's
// sections to docs/, and the links into them with them).
func TestDocLinks(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	anchors := map[string]map[string]bool{} // by page
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(raw))
		return anchors[page]
	}
	link := regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	checked := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := withoutCode(string(raw))
		for _, m := range link.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			where := filepath.Base(file) + ":" + strconv.Itoa(1+strings.Count(text[:m[0]], "\n"))
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			page := file
			if path != "" {
				page = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(page); err != nil {
					t.Errorf("%s: link %s: no such file", where, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(page, ".md") {
				t.Errorf("%s: link %s: an anchor into a file that is not markdown", where, target)
				continue
			}
			if !anchorsOf(page)[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", where, target, filepath.Base(page), anchor)
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked %d relative links, want the README's and docs' (40 or more)", checked)
	}
}

// withoutCode blanks fenced code blocks and inline code spans of markdown, keeping its
// line breaks (so positions still tell lines): a link written as code is not a link.
func withoutCode(md string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			b.WriteString("\n")
			continue
		}
		if fenced {
			b.WriteString("\n")
			continue
		}
		b.WriteString(line)
	}
	blank := func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) }
	s := regexp.MustCompile("``[^`]+``").ReplaceAllStringFunc(b.String(), blank)
	return regexp.MustCompile("`[^`]+`").ReplaceAllStringFunc(s, blank)
}

// headingAnchors returns the anchors GitHub gives the headings of a markdown page: the
// heading's text lower-cased, without punctuation, spaces made hyphens, and -1, -2 … after
// a repeated one.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for line := range strings.Lines(md) {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		text, ok := strings.CutPrefix(trimmed, "#")
		if fenced || !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				slug.WriteRune(r)
			case r == ' ':
				slug.WriteRune('-')
			}
		}
		a := slug.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

// TestCommandFlagsDocumented: docs/commands.md has a section (## `anima COMMAND`) for every
// command `anima --help` lists, and each section names every flag that command's --help
// shows, --config aside (the page's "Finding the configuration" gives it for all). The
// README's table named some flags and left the rest to --help (issue 36).
func TestCommandFlagsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, chunk := range strings.Split(string(raw), "\n## ") {
		heading, body, _ := strings.Cut(chunk, "\n")
		if name, ok := strings.CutPrefix(heading, "`anima "); ok && strings.HasSuffix(name, "`") {
			sections[strings.TrimSuffix(name, "`")] = body
		}
		if heading == "Finding the configuration" && !strings.Contains(body, "`--config FILE`") {
			t.Error("docs/commands.md's Finding the configuration does not give --config FILE")
		}
	}
	word := regexp.MustCompile(`^[a-z]+$`)
	flagName := regexp.MustCompile(`(?m)(?:^|[\s\[])--?([a-z][a-z0-9-]*)`)
	var commands []string
	for line := range strings.Lines(usage) {
		synopsis, _, _ := strings.Cut(strings.TrimPrefix(line, "  "), "  ") // before its description
		fields := strings.Fields(synopsis)
		if len(fields) < 2 || fields[0] != "anima" || !strings.HasPrefix(line, "  anima ") {
			continue
		}
		var name []string
		for _, f := range fields[1:] {
			if !word.MatchString(f) {
				break
			}
			name = append(name, f)
		}
		if c := strings.Join(name, " "); c != "" && !slices.Contains(commands, c) {
			commands = append(commands, c)
		}
	}
	if len(commands) < 12 {
		t.Fatalf("found %d commands in the usage, want every one: %v", len(commands), commands)
	}
	for _, c := range commands {
		section, ok := sections[c]
		if !ok {
			t.Errorf("docs/commands.md has no section ## `anima %s`", c)
			continue
		}
		var out, errOut strings.Builder
		args := append(strings.Fields(c), "--help")
		if c == "init" {
			initCommand(args[1:], strings.NewReader(""), &out, &errOut)
		} else {
			parse(args, strings.NewReader(""), &out, &errOut)
		}
		help := out.String() + errOut.String()
		for _, m := range flagName.FindAllStringSubmatch(help, -1) {
			f := m[1]
			if f == "config" || f == "help" {
				continue
			}
			if !regexp.MustCompile(`(?:^|[^a-z-])--?` + regexp.QuoteMeta(f) + `\b`).MatchString(section) {
				t.Errorf("docs/commands.md's section on anima %s does not name --%s, which its --help shows", c, f)
			}
		}
	}
}
