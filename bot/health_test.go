package bot_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	serve := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	readyz := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/readyz" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}
	ready := serve(readyz(http.StatusOK, "ready\nstore: ok\ntelegram: ok\n"))
	_, readyPort, _ := net.SplitHostPort(ready)
	// A port nobody listens on: listen, note it, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	for _, tc := range []struct {
		name   string
		listen string
		want   string // in the error; "" for healthy
	}{
		{"ready", ready, ""},
		{"wildcard address is asked on loopback", "0.0.0.0:" + readyPort, ""},
		{"empty host is asked on loopback", ":" + readyPort, ""},
		{"not ready", serve(readyz(http.StatusServiceUnavailable, "not ready\nstore: ok\ntelegram: unavailable\n")),
			"answered 503 Service Unavailable: not ready; store: ok; telegram: unavailable"},
		{"not anima", serve(http.NotFound), "answered 404 Not Found"},
		{"nothing listening", closed, "connection refused (is anima running?)"},
		{"no answer in time", serve(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }),
			"did not answer within 200ms"},
		{"metrics off", "", "metrics.listen is empty"},
		{"port chosen at start", "127.0.0.1:0", "port 0"},
		{"not host:port", "localhost", "metrics.listen \"localhost\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := bot.Health(context.Background(), tc.listen, 200*time.Millisecond)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Health = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Health = %v, want an error containing %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("Health = %q: want one line", err)
			}
		})
	}
	t.Run("IPv6 wildcard is asked on ::1", func(t *testing.T) {
		ln, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Skipf("no IPv6 loopback here: %v", err)
		}
		srv := httptest.NewUnstartedServer(readyz(http.StatusOK, "ready\n"))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		defer srv.Close()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		if err := bot.Health(context.Background(), "[::]:"+port, time.Second); err != nil {
			t.Fatalf("Health = %v, want nil", err)
		}
	})
}
