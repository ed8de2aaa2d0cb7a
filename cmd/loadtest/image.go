package main

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// pageSize is the size of a page as /proc/<pid>/pagemap counts them.
var pageSize = uint64(os.Getpagesize())

// imageUse is what one part of the binary costs a running process: the pages of it
// resident in the process (read from /proc/<pid>/pagemap), beside the part's size.
type imageUse struct {
	name     string
	size     uint64  // bytes of the part in the image
	resident float64 // bytes of it on resident pages (a page shared by parts is split by bytes)
}

// imageReport is the binary image's residency by ELF section and, within the sections
// that hold symbols, by the family of packages the symbols belong to.
type imageReport struct {
	sections []imageUse
	families []imageUse
}

// readImage reads which pages of binary's loaded sections are resident in process pid and
// attributes each resident page to the sections and symbols on it.
func readImage(pid int, binary string) (imageReport, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return imageReport{}, fmt.Errorf("image: %w", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return imageReport{}, fmt.Errorf("image symbols: %w", err)
	}
	present, err := residentPages(pid, f)
	if err != nil {
		return imageReport{}, err
	}
	var rep imageReport
	fam := map[string]*imageUse{}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Size == 0 || s.Addr == 0 {
			continue
		}
		use := imageUse{name: s.Name, size: s.Size}
		use.resident = overlapResident(present, s.Addr, s.Addr+s.Size)
		rep.sections = append(rep.sections, use)
	}
	for _, sym := range syms {
		if sym.Size == 0 || sym.Section == elf.SHN_UNDEF || int(sym.Section) >= len(f.Sections) ||
			f.Sections[sym.Section].Type == elf.SHT_NOBITS {
			continue // not in the file: .bss and .noptrbss are anonymous memory
		}
		name := family(sym.Name)
		u := fam[name]
		if u == nil {
			u = &imageUse{name: name}
			fam[name] = u
		}
		u.size += sym.Size
		u.resident += overlapResident(present, sym.Value, sym.Value+sym.Size)
	}
	for _, u := range fam {
		rep.families = append(rep.families, *u)
	}
	slices.SortFunc(rep.families, func(a, b imageUse) int { return cmp.Compare(b.resident, a.resident) })
	return rep, nil
}

// residentPages returns the page numbers (address / pageSize) of the loadable segments of
// the binary that are present in the process's memory.
func residentPages(pid int, f *elf.File) (map[uint64]bool, error) {
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	defer pm.Close()
	present := map[uint64]bool{}
	buf := make([]byte, 8)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		for page := p.Vaddr / pageSize; page*pageSize < p.Vaddr+p.Memsz; page++ {
			if _, err := pm.ReadAt(buf, int64(page*8)); err != nil {
				return nil, fmt.Errorf("image: read pagemap: %w", err)
			}
			if binary.LittleEndian.Uint64(buf)&(1<<63) != 0 {
				present[page] = true
			}
		}
	}
	return present, nil
}

// overlapResident returns how many bytes of [lo, hi) lie on resident pages.
func overlapResident(present map[uint64]bool, lo, hi uint64) float64 {
	var n uint64
	for page := lo / pageSize; page*pageSize < hi; page++ {
		if !present[page] {
			continue
		}
		n += min(hi, (page+1)*pageSize) - max(lo, page*pageSize)
	}
	return float64(n)
}

// families group a symbol's package into the parts the binary is made of.
var families = []struct{ prefix, name string }{
	{"github.com/anima-bot/anima/bot/sim", "anima: simulator"},
	{"github.com/anima-bot/anima/bot/setup", "anima: init (bot/setup)"},
	{"github.com/anima-bot/anima/brain/cognition/openaitest", "test fakes (openaitest, braintest, httptest, testing)"},
	{"github.com/anima-bot/anima/brain/braintest", "test fakes (openaitest, braintest, httptest, testing)"},
	{"net/http/httptest", "test fakes (openaitest, braintest, httptest, testing)"},
	{"testing", "test fakes (openaitest, braintest, httptest, testing)"},
	{"github.com/anima-bot/anima/plugins/mcp", "anima: plugins/mcp"},
	{"github.com/anima-bot/anima", "anima: the service's own packages"},
	{"github.com/modelcontextprotocol", "MCP SDK (go-sdk, jsonschema-go, oauth2, segmentio)"},
	{"github.com/google/jsonschema-go", "MCP SDK (go-sdk, jsonschema-go, oauth2, segmentio)"},
	{"golang.org/x/oauth2", "MCP SDK (go-sdk, jsonschema-go, oauth2, segmentio)"},
	{"github.com/segmentio", "MCP SDK (go-sdk, jsonschema-go, oauth2, segmentio)"},
	{"github.com/yosida95/uritemplate", "MCP SDK (go-sdk, jsonschema-go, oauth2, segmentio)"},
	{"github.com/yuin/goldmark", "goldmark (Markdown → Telegram HTML)"},
	{"github.com/go-telegram/bot", "go-telegram/bot"},
	{"github.com/sashabaranov/go-openai", "go-openai"},
	{"go.etcd.io/bbolt", "bbolt"},
	{"github.com/prometheus", "Prometheus client (+ client_model, common, procfs)"},
	{"google.golang.org/protobuf", "protobuf (for Prometheus)"},
	{"github.com/munnerz/goautoneg", "Prometheus client (+ client_model, common, procfs)"},
	{"github.com/beorn7/perks", "Prometheus client (+ client_model, common, procfs)"},
	{"github.com/cespare/xxhash", "Prometheus client (+ client_model, common, procfs)"},
	{"go.yaml.in/yaml", "YAML"},
	{"github.com/robfig/cron", "cron"},
	{"golang.org/x/term", "anima: init (bot/setup)"},
	{"golang.org/x/", "golang.org/x (net, sys, text)"},
	{"runtime", "Go runtime"},
	{"internal/", "Go runtime"},
}

// family names the part of the binary a symbol belongs to: its package's family, or for
// data without a package (strings, tables) the kind of data.
func family(sym string) string {
	pkg := strings.TrimPrefix(strings.TrimPrefix(sym, "type:"), "*")
	switch {
	case strings.HasPrefix(sym, "go:string"), strings.HasPrefix(sym, "go:string."):
		return "string data"
	case strings.HasPrefix(sym, "runtime.pclntab"), strings.HasPrefix(sym, "runtime.text"),
		strings.HasPrefix(sym, "go:func."), strings.HasPrefix(sym, "runtime.functab"),
		strings.HasPrefix(sym, "runtime.filetab"), strings.HasPrefix(sym, "runtime.pctab"),
		strings.HasPrefix(sym, "runtime.cutab"), strings.HasPrefix(sym, "runtime.funcnametab"):
		return "function tables (pclntab, funcdata)"
	case strings.HasPrefix(sym, "go:itab."):
		pkg = strings.TrimPrefix(strings.TrimPrefix(sym, "go:itab."), "*")
	case strings.HasPrefix(sym, "type:."), strings.HasPrefix(sym, "go:"), strings.HasPrefix(sym, "gclocals"):
		return "other runtime data"
	}
	for _, f := range families {
		if strings.HasPrefix(pkg, f.prefix) {
			return f.name
		}
	}
	first := pkg
	if i := strings.IndexByte(first, '/'); i >= 0 {
		first = first[:i]
	} else if i := strings.IndexByte(first, '.'); i >= 0 {
		first = first[:i]
	}
	if !strings.Contains(first, ".") {
		return "Go standard library"
	}
	return "other modules"
}

// printImage prints rep's sections and families: size in the image, resident in the process.
func (lt *loadtest) printImage(rep imageReport) {
	lt.printf("   binary image pages resident (pagemap; a page shared by two parts is split by bytes):\n")
	lt.printf("   %-56s %10s %10s\n", "section", "size KiB", "resident")
	for _, s := range rep.sections {
		lt.printf("   %-56s %10.0f %10.0f\n", s.name, float64(s.size)/1024, s.resident/1024)
	}
	lt.printf("   %-56s %10s %10s\n", "part (its symbols in the file's sections)", "size KiB", "resident")
	for _, u := range rep.families {
		if u.resident < 4096 && u.size < 256<<10 {
			continue
		}
		lt.printf("   %-56s %10.0f %10.0f\n", u.name, float64(u.size)/1024, u.resident/1024)
	}
}

// binaryPath is the absolute path of the binary the process runs, for reading its image.
func binaryPath(pid int, fallback string) string {
	if p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		return p
	}
	abs, err := filepath.Abs(fallback)
	if err != nil {
		return fallback
	}
	return abs
}
