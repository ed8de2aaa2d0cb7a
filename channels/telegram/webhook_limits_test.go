package telegram

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/anima-bot/anima/channels/listener"
)

// limitedWebhook starts a webhook channel whose server has limits lim.
func limitedWebhook(t *testing.T, lim listener.Limits) string {
	t.Helper()
	h := newHarness(t, 0, func(c *Config, _ *Options) {
		c.Mode = ModeWebhook
		c.Webhook = WebhookConfig{Listen: "127.0.0.1:0", Path: "/tg/hook", SecretToken: secret}
	})
	h.ch.webhookLimits = lim
	h.start(t)
	return h.ch.Addr().String()
}

// keepAliveGet sends a GET without the secret (401, connection kept) and reads the answer.
func keepAliveGet(t *testing.T, conn net.Conn, r *bufio.Reader) int {
	t.Helper()
	if _, err := io.WriteString(conn, "GET /tg/hook HTTP/1.1\r\nHost: anima\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func dialConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// serverCloses reports whether the server closes conn within 5 s.
func serverCloses(conn net.Conn, r io.Reader) bool {
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func TestWebhookServerTimeouts(t *testing.T) {
	lim := webhookLimits()
	lim.Idle, lim.ReadHeader = 150*time.Millisecond, 150*time.Millisecond
	addr := limitedWebhook(t, lim)

	t.Run("idle keep-alive closed", func(t *testing.T) {
		conn := dialConn(t, addr)
		r := bufio.NewReader(conn)
		if code := keepAliveGet(t, conn, r); code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", code)
		}
		if !serverCloses(conn, r) {
			t.Error("an idle keep-alive connection was still open 5 s after an idle timeout of 150 ms")
		}
	})
	t.Run("slowloris cut off", func(t *testing.T) {
		conn := dialConn(t, addr)
		if _, err := io.WriteString(conn, "POST /tg/hook HTTP/1.1\r\nHost: anima\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		if !serverCloses(conn, conn) {
			t.Error("a request whose headers never end was still open 5 s after a header timeout of 150 ms")
		}
	})
}

func TestWebhookServerCapsConnections(t *testing.T) {
	lim := webhookLimits()
	lim.MaxConns = 2
	addr := limitedWebhook(t, lim)

	var held []net.Conn
	for range 2 {
		conn := dialConn(t, addr)
		if code := keepAliveGet(t, conn, bufio.NewReader(conn)); code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", code)
		}
		held = append(held, conn)
	}
	third := dialConn(t, addr)
	if _, err := io.WriteString(third, "GET /tg/hook HTTP/1.1\r\nHost: anima\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(third)
	_ = third.SetReadDeadline(time.Now().Add(200 * time.Millisecond)) // a bounded check that nothing comes
	if _, err := r.Peek(1); err == nil {
		t.Fatal("a third connection was served with a cap of 2")
	}
	_ = held[1].Close()
	_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the waiting connection was not served after a slot was freed: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", resp.StatusCode)
	}
}

func TestWebhookDefaultLimits(t *testing.T) {
	h := newHarness(t, 0, nil)
	lim := h.ch.webhookLimits
	if lim != webhookLimits() || lim.ReadHeader <= 0 || lim.Read <= 0 || lim.Write <= 0 || lim.Idle <= 0 ||
		lim.MaxHeaderBytes <= 0 || lim.MaxConns <= 0 {
		t.Errorf("webhook limits = %+v", lim)
	}
}
