package listener

import (
	"errors"
	"net"
	"testing"
	"time"
)

// accepted runs Accept in the background and reports its result.
func accepted(ln net.Listener) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(ch)
			return
		}
		ch <- c
	}()
	return ch
}

// limitedTCP is Limit(n) over a loopback TCP listener, closed when the test ends.
func limitedTCP(t *testing.T, n int) net.Listener {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Limit(inner, n)
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// accept is ln.Accept; an error fails the test.
func accept(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dial connects to ln; the connection is closed when the test ends.
func dial(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestLimitHoldsConnectionsBeyondTheCap(t *testing.T) {
	t.Parallel()
	ln := limitedTCP(t, 2)

	var conns []net.Conn
	for range 2 {
		dial(t, ln)
		c := accept(t, ln)
		conns = append(conns, c)
	}
	dial(t, ln) // connected in the backlog, not accepted
	third := accepted(ln)
	select {
	case <-third:
		t.Fatal("a third connection was accepted with a cap of 2")
	case <-time.After(100 * time.Millisecond): // a bounded check that nothing happens
	}
	// Closing twice gives back one slot only.
	_ = conns[0].Close()
	_ = conns[0].Close()
	select {
	case c, ok := <-third:
		if !ok {
			t.Fatal("Accept failed after a slot was freed")
		}
		conns = append(conns, c)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was not accepted after a slot was freed")
	}
	dial(t, ln)
	fourth := accepted(ln)
	select {
	case <-fourth:
		t.Fatal("a double Close freed two slots")
	case <-time.After(100 * time.Millisecond):
	}
	_ = ln.Close()
	select {
	case _, ok := <-fourth:
		if ok {
			t.Fatal("Accept succeeded on a closed listener")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Accept")
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

func TestLimitAcceptAfterClose(t *testing.T) {
	t.Parallel()
	ln := limitedTCP(t, 1)
	_ = ln.Close()
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

func TestLimitForwardsCloseWrite(t *testing.T) {
	t.Parallel()
	ln := limitedTCP(t, 1)
	client := dial(t, ln)
	c := accept(t, ln)
	defer c.Close()
	if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := client.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("read after the server's CloseWrite: %d, %v; want EOF", n, err)
	}
}
