package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ReadyFunc reports whether a dependency is ready; nil means ready.
type ReadyFunc func(ctx context.Context) error

// metricsServer serves /metrics, /healthz and /readyz.
type metricsServer struct {
	srv   *http.Server
	ln    net.Listener
	log   *slog.Logger
	ready map[string]ReadyFunc

	mu      sync.Mutex
	checked time.Time
	lastErr error
}

func newMetricsServer(listen string, reg *prometheus.Registry, ready map[string]ReadyFunc, log *slog.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen %s: %w", listen, err)
	}
	s := &metricsServer{ln: ln, log: log.With("component", "metrics"), ready: ready}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return s, nil
}

// Addr is the address the server listens on.
func (s *metricsServer) Addr() string { return s.ln.Addr().String() }

func (s *metricsServer) readyz(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Readiness probes come often; dependencies are asked at most every 5 seconds.
	if time.Since(s.checked) > 5*time.Second || s.lastErr != nil {
		s.lastErr = nil
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		for name, f := range s.ready {
			if err := f(ctx); err != nil {
				s.lastErr = fmt.Errorf("%s: %w", name, err)
				break
			}
		}
		cancel()
		s.checked = time.Now()
	}
	if s.lastErr != nil {
		http.Error(w, "not ready: "+s.lastErr.Error(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
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
