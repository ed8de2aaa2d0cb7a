package bot

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/channels/channelstest"
	"github.com/anima-bot/anima/channels/listener"
	"github.com/anima-bot/anima/channels/listener/listenertest"
	"github.com/prometheus/client_golang/prometheus"
)

// startMetrics runs a metrics server with limits lim until the test ends.
func startMetrics(t *testing.T, lim listener.Limits, ready map[string]ReadyFunc, log *slog.Logger) *metricsServer {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := newMetricsServerLimits("127.0.0.1:0", prometheus.NewRegistry(), ready, log, lim)
	if err != nil {
		t.Fatal(err)
	}
	channelstest.Run(t, s.Run)
	return s
}

func TestMetricsServerLimits(t *testing.T) {
	t.Parallel()
	short := metricsLimits()
	short.Idle = 150 * time.Millisecond
	short.ReadHeader = 150 * time.Millisecond
	s := startMetrics(t, short, nil, nil)
	listenertest.CheckTimeouts(t, s.Addr(), "/healthz", http.StatusOK)
}

func TestMetricsServerDefaultLimits(t *testing.T) {
	t.Parallel()
	s, err := newMetricsServer("127.0.0.1:0", prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.ln.Close()
	srv := s.srv
	if srv.ReadHeaderTimeout != metricsReadHeaderTimeout || srv.ReadTimeout != metricsReadTimeout ||
		srv.WriteTimeout != metricsWriteTimeout || srv.IdleTimeout != metricsIdleTimeout ||
		srv.MaxHeaderBytes != metricsMaxHeaderBytes {
		t.Errorf("metrics server limits = header %v read %v write %v idle %v max header %d",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	for _, d := range []time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout} {
		if d <= 0 {
			t.Errorf("a timeout is unset: %v", d)
		}
	}
}

func TestMetricsServerCapsConnections(t *testing.T) {
	t.Parallel()
	lim := metricsLimits()
	lim.MaxConns = 2
	s := startMetrics(t, lim, nil, nil)
	listenertest.CheckCap(t, s.Addr(), "/healthz", http.StatusOK)
}

// TestReadyzWithoutDetails: the body is a fixed text per check; why a check failed goes
// to the log only.
func TestReadyzWithoutDetails(t *testing.T) {
	t.Parallel()
	var logs braintest.Buffer
	var down atomic.Bool
	down.Store(true)
	ready := map[string]ReadyFunc{
		"telegram": func(context.Context) error {
			if down.Load() {
				return errors.New("getMe: Post https://api.telegram.org/bot123:SECRET/getMe: refused")
			}
			return nil
		},
		"store": func(context.Context) error { return nil },
	}
	s := startMetrics(t, metricsLimits(), ready, slog.New(slog.NewTextHandler(&logs, nil)))
	resp, err := http.Get("http://" + s.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != "not ready\nstore: ok\ntelegram: unavailable\n" {
		t.Errorf("/readyz = %d %q", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "refused") || !strings.Contains(logs.String(), "check=telegram") {
		t.Errorf("the reason is not in the log:\n%s", logs.String())
	}

	down.Store(false)
	resp, err = http.Get("http://" + s.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ready\nstore: ok\ntelegram: ok\n" {
		t.Errorf("/readyz after recovery = %d %q", resp.StatusCode, body)
	}
}
