package mcp

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/cognition"
)

// floodEnv sets how long TestFloodStaysFlat floods (a Go duration; default 3s), for
// measuring: ANIMA_MCP_FLOOD=20s go test -run TestFloodStaysFlat -v ./plugins/mcp/;
// floodModeEnv sets the helper's mode: flood (the SDK server, the default), raw-flood
// (list_changed every 2 ms) or raw-pages (endless 100 KB pages).
const floodEnv, floodModeEnv = "ANIMA_MCP_FLOOD", "ANIMA_MCP_FLOOD_MODE"

// lineCount is a slog handler that counts the lines it is given.
type lineCount struct{ n atomic.Int64 }

func (*lineCount) Enabled(context.Context, slog.Level) bool    { return true }
func (h *lineCount) Handle(context.Context, slog.Record) error { h.n.Add(1); return nil }
func (h *lineCount) WithAttrs([]slog.Attr) slog.Handler        { return h }
func (h *lineCount) WithGroup(string) slog.Handler             { return h }

// mcpSeries counts the anima_mcp_* series reg holds.
func mcpSeries(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "anima_mcp_") {
			n += len(mf.GetMetric())
		}
	}
	return n
}

// rssKB is this process's resident set in kB (VmRSS), 0 where /proc is missing.
func rssKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb int64
			for _, c := range strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")) {
				kb = kb*10 + int64(c-'0')
			}
			return kb
		}
	}
	return 0
}

// TestFloodStaysFlat runs the real supervision of a stdio server that swaps in 50 new
// 120-byte-named tools every 25 ms (about 40 tools/list_changed a second) against the
// cognition registry and a real Prometheus registry: the anima_mcp_* series and the log
// lines stay flat, whatever the flood's length. Each second's series, log lines, heap
// and RSS are logged (-v) for measuring.
func TestFloodStaysFlat(t *testing.T) {
	t.Parallel()
	d := 3 * time.Second
	if v := os.Getenv(floodEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s: %v", floodEnv, err)
		}
	}
	srv := helperServer("flood")
	srv.Env[helperEnv] = "flood"
	if m := os.Getenv(floodModeEnv); m != "" {
		srv.Env[helperEnv] = m
	}
	reg := prometheus.NewRegistry()
	lines := &lineCount{}
	mgr := New([]Server{srv}, cognition.NewRegistry(), Options{Registerer: reg, Logger: slog.New(lines)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// Up first, so that the flood's length is measured from the first listing.
	for up := time.After(20 * time.Second); len(mgr.Status()) == 0 || mgr.Status()[0].Tools == 0; {
		select {
		case <-up:
			t.Fatal("the flooding server never came up")
		case <-time.After(20 * time.Millisecond):
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var series []int
	var ms runtime.MemStats
	for i := 1; i <= int(d/time.Second); i++ {
		<-tick.C
		runtime.GC()
		runtime.ReadMemStats(&ms)
		series = append(series, mcpSeries(t, reg))
		t.Logf("t=%2ds series=%d log_lines=%d heap_alloc=%.1fMB rss=%.1fMB tools=%d", i, series[len(series)-1],
			lines.n.Load(), float64(ms.HeapAlloc)/1e6, float64(rssKB())/1e3, mgr.Status()[0].Tools)
	}
	// up, restarts, the call-seconds histogram, and at most one series per tool taken.
	bound := 3 + srv.Limits.withDefaults().Tools
	if most := slices.Max(series); most > bound {
		t.Errorf("during %s of flood up to %d anima_mcp_* series (%v), want at most %d", d, most, series, bound)
	}
	// The first listing's lines (the bad tool refused, up), and one summary a minute.
	want := int64(2 + d/summaryEvery)
	if srv.Env[helperEnv] == "raw-pages" {
		want += 2 // the tools past the limit, the listing cut short
	}
	if n := lines.n.Load(); n > want {
		t.Errorf("%d log lines in %s of flood, want at most %d", n, d, want)
	}
}
