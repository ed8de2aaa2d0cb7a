// Package listenertest checks, over raw TCP, that an HTTP server built with
// listener.Server keeps its limits: idle keep-alive connections closed, requests whose
// headers never end cut off, connections beyond the cap held until a slot frees. The
// metrics server and the webhook share these checks.
package listenertest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// Dial connects to addr and closes the connection when the test ends.
func Dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Get sends a keep-alive GET of path on conn and returns the answer's status and body.
func Get(t *testing.T, conn net.Conn, r *bufio.Reader, path string) (int, string) {
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

// ClosedByServer reports whether the server closes conn within 5 s (what else comes is
// read and dropped).
func ClosedByServer(conn net.Conn, r io.Reader) bool {
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout()) // EOF (io.Copy returns nil) or a reset
}

// CheckTimeouts checks a server at addr whose idle and header timeouts are short (well
// under 5 s): a keep-alive connection is closed once idle after a GET of path (answered
// with want), and a request to path whose headers never end is cut off.
func CheckTimeouts(t *testing.T, addr, path string, want int) {
	t.Run("idle keep-alive closed", func(t *testing.T) {
		conn := Dial(t, addr)
		r := bufio.NewReader(conn)
		if code, body := Get(t, conn, r, path); code != want {
			t.Fatalf("GET %s = %d %q, want %d", path, code, body, want)
		}
		if !ClosedByServer(conn, r) {
			t.Error("an idle keep-alive connection was still open 5 s after the idle timeout")
		}
	})
	t.Run("slowloris cut off", func(t *testing.T) {
		conn := Dial(t, addr)
		if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: anima\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		if !ClosedByServer(conn, conn) {
			t.Error("a request whose headers never end was still open 5 s after the header timeout")
		}
	})
}

// CheckCap checks a server at addr capped at two connections: two idle keep-alive
// connections (each after a GET of path answered with want) hold both slots, a third is
// not served, and it is served once one of the two closes.
func CheckCap(t *testing.T, addr, path string, want int) {
	t.Helper()
	var held []net.Conn
	for range 2 {
		conn := Dial(t, addr)
		if code, _ := Get(t, conn, bufio.NewReader(conn), path); code != want {
			t.Fatalf("GET %s = %d, want %d", path, code, want)
		}
		held = append(held, conn) // idle keep-alive: it holds its slot
	}
	third := Dial(t, addr)
	if _, err := io.WriteString(third, "GET "+path+" HTTP/1.1\r\nHost: anima\r\n\r\n"); err != nil {
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
	if resp.StatusCode != want {
		t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
	}
}
