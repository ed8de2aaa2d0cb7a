package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/anima-bot/anima/channels/listener"
)

// ReadyFunc reports whether a dependency is ready; nil means ready.
type ReadyFunc func(ctx context.Context) error

// Limits of the metrics server (documented in docs/metrics.md). A client that holds a
// connection open without finishing a request, or idles on a keep-alive, is cut off;
// beyond metricsMaxConns connections, new ones wait to be accepted.
const (
	metricsReadHeaderTimeout = 5 * time.Second
	metricsReadTimeout       = 10 * time.Second
	metricsWriteTimeout      = 30 * time.Second // a scrape of /metrics, or /readyz's checks (5 s)
	metricsIdleTimeout       = 60 * time.Second
	metricsMaxHeaderBytes    = 16 << 10
	metricsMaxConns          = 64
)

// readyEvery is how often /readyz asks the dependencies while they are ready; a failing
// one is asked again on every probe.
const readyEvery = 5 * time.Second

func metricsLimits() listener.Limits {
	return listener.Limits{
		ReadHeader: metricsReadHeaderTimeout, Read: metricsReadTimeout, Write: metricsWriteTimeout,
		Idle: metricsIdleTimeout, MaxHeaderBytes: metricsMaxHeaderBytes, MaxConns: metricsMaxConns,
	}
}

// metricsServer serves /metrics, /healthz and /readyz.
type metricsServer struct {
	srv   *http.Server
	ln    net.Listener
	log   *slog.Logger
	ready map[string]ReadyFunc
	info  func() []string // lines after the checks that never make anima unready; may be nil
	names []string        // of ready, sorted

	mu      sync.Mutex
	checked time.Time
	failed  map[string]bool // by check, as of checked
}

func newMetricsServer(listen string, reg *prometheus.Registry, ready map[string]ReadyFunc, log *slog.Logger) (*metricsServer, error) {
	return newMetricsServerLimits(listen, reg, ready, log, metricsLimits())
}

func newMetricsServerLimits(listen string, reg *prometheus.Registry, ready map[string]ReadyFunc, log *slog.Logger, lim listener.Limits) (*metricsServer, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen %s: %w", listen, err)
	}
	s := &metricsServer{
		log:   log.With("component", "metrics"),
		ready: ready,
	}
	for name := range ready {
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	s.srv, s.ln = listener.Server(ln, mux, lim)
	return s, nil
}

// Addr is the address the server listens on.
func (s *metricsServer) Addr() string { return s.ln.Addr().String() }

// readyz answers 200 "ready" or 503 "not ready", then one line per check: "store: ok",
// "telegram: unavailable". The body never carries an error's text (it is unauthenticated,
// and errors may quote what they should not); why a check failed goes to the log.
func (s *metricsServer) readyz(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Readiness probes come often; dependencies are asked at most every readyEvery while
	// they are ready.
	if time.Since(s.checked) > readyEvery || len(s.failed) > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		s.failed = map[string]bool{}
		for _, name := range s.names {
			if err := s.ready[name](ctx); err != nil {
				s.failed[name] = true
				s.log.Warn("readiness check failed", "check", name, "err", err)
			}
		}
		cancel()
		s.checked = time.Now()
	}
	var b strings.Builder
	if len(s.failed) > 0 {
		b.WriteString("not ready\n")
	} else {
		b.WriteString("ready\n")
	}
	for _, name := range s.names {
		if s.failed[name] {
			b.WriteString(name + ": unavailable\n")
		} else {
			b.WriteString(name + ": ok\n")
		}
	}
	if s.info != nil {
		for _, l := range s.info() {
			b.WriteString(l + "\n")
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if len(s.failed) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write([]byte(b.String()))
}

func (s *metricsServer) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server shutdown: %w", err)
	}
	return nil
}
