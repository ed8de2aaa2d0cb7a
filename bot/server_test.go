package bot

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/braintest"

	"github.com/anima-bot/anima/channels/listener"
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
	return s
}

// rawGet sends a keep-alive GET on conn and reads the answer.
func rawGet(t *testing.T, conn net.Conn, r *bufio.Reader, path string) (int, string) {
	t.Helper()
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: anima\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedByServer reports whether the server closes conn within 5 s (nothing else is read).
func closedByServer(t *testing.T, conn net.Conn, r io.Reader) bool {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true // EOF (io.Copy returns nil) or a reset
}

func TestMetricsServerLimits(t *testing.T) {
	short := metricsLimits()
	short.Idle = 150 * time.Millisecond
	short.ReadHeader = 150 * time.Millisecond
	s := startMetrics(t, short, nil, nil)

	t.Run("idle keep-alive closed", func(t *testing.T) {
		conn := dialT(t, s.Addr())
		r := bufio.NewReader(conn)
		if code, body := rawGet(t, conn, r, "/healthz"); code != 200 || body != "ok\n" {
			t.Fatalf("/healthz = %d %q", code, body)
		}
		if !closedByServer(t, conn, r) {
			t.Error("an idle keep-alive connection was still open 5 s after an idle timeout of 150 ms")
		}
	})
	t.Run("slowloris cut off", func(t *testing.T) {
		conn := dialT(t, s.Addr())
		if _, err := io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: anima\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		if !closedByServer(t, conn, conn) {
			t.Error("a request whose headers never end was still open 5 s after a header timeout of 150 ms")
		}
	})
}

func TestMetricsServerDefaultLimits(t *testing.T) {
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
	lim := metricsLimits()
	lim.MaxConns = 2
	s := startMetrics(t, lim, nil, nil)

	var held []net.Conn
	for range 2 {
		conn := dialT(t, s.Addr())
		if code, _ := rawGet(t, conn, bufio.NewReader(conn), "/healthz"); code != 200 {
			t.Fatalf("/healthz = %d", code)
		}
		held = append(held, conn) // idle keep-alive: it holds its slot
	}
	third := dialT(t, s.Addr())
	if _, err := io.WriteString(third, "GET /healthz HTTP/1.1\r\nHost: anima\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(third)
	_ = third.SetReadDeadline(time.Now().Add(200 * time.Millisecond)) // a bounded check that nothing comes
	if _, err := r.Peek(1); err == nil {
		t.Fatal("a third connection was served with a cap of 2")
	}
	_ = held[0].Close()
	_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the waiting connection was not served after a slot was freed: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
}

// TestReadyzWithoutDetails: the body is a fixed text per check; why a check failed goes
// to the log only.
func TestReadyzWithoutDetails(t *testing.T) {
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
