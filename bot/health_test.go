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
		want   string        // in the error; "" for healthy
		wait   time.Duration // Health's timeout: 0 is 10 s, room for a loaded machine
	}{
		{name: "ready", listen: ready},
		{name: "wildcard address is asked on loopback", listen: "0.0.0.0:" + readyPort},
		{name: "empty host is asked on loopback", listen: ":" + readyPort},
		{name: "not ready", listen: serve(readyz(http.StatusServiceUnavailable, "not ready\nstore: ok\ntelegram: unavailable\n")),
			want: "answered 503 Service Unavailable: not ready; store: ok; telegram: unavailable"},
		{name: "not anima", listen: serve(http.NotFound), want: "answered 404 Not Found"},
		{name: "nothing listening", listen: closed, want: "connection refused (is anima running?)"},
		{name: "no answer in time", listen: serve(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }),
			want: "did not answer within 200ms", wait: 200 * time.Millisecond},
		{name: "metrics off", listen: "", want: "metrics.listen is empty"},
		{name: "port chosen at start", listen: "127.0.0.1:0", want: "port 0"},
		{name: "not host:port", listen: "localhost", want: "metrics.listen \"localhost\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait := tc.wait
			if wait == 0 {
				wait = 10 * time.Second
			}
			err := bot.Health(context.Background(), tc.listen, wait)
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
		if err := bot.Health(context.Background(), "[::]:"+port, 10*time.Second); err != nil {
			t.Fatalf("Health = %v, want nil", err)
		}
	})
}
