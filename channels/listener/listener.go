// Package listener bounds the servers anima runs (metrics, webhook): how many
// connections each holds at once, so that clients that connect and linger (idle
// keep-alives, slow readers) cannot take every file descriptor the process has, and how
// long each may take to send a request or read an answer.
package listener

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limit returns a listener that holds at most n accepted connections at a time: beyond
// n, Accept waits until one of them is closed, and new connections wait in the kernel's
// backlog meanwhile instead of being accepted. Closing the listener ends a waiting
// Accept with net.ErrClosed. n must be at least 1.
func Limit(ln net.Listener, n int) net.Listener {
	if n < 1 {
		panic("listener.Limit: n must be at least 1")
	}
	return &limited{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

type limited struct {
	net.Listener
	slots  chan struct{} // one token per accepted, not yet closed connection
	closed chan struct{}
	once   sync.Once
}

func (l *limited) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &conn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limited) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// conn gives its slot back when closed (once, however often Close is called).
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the connection when the underlying one can (TCP and unix
// sockets can): net/http uses it to make sure an error answer reaches the client before
// the connection is closed.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// Limits are an HTTP server's timeouts and connection cap.
type Limits struct {
	ReadHeader, Read, Write, Idle time.Duration
	MaxHeaderBytes, MaxConns      int
}

// Server returns an http.Server for h with lim's timeouts, and ln capped at lim.MaxConns
// connections, for the server to Serve.
func Server(ln net.Listener, h http.Handler, lim Limits) (*http.Server, net.Listener) {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeader,
		ReadTimeout:       lim.Read,
		WriteTimeout:      lim.Write,
		IdleTimeout:       lim.Idle,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
	}, Limit(ln, lim.MaxConns)
}
