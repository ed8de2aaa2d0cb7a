package main

import (
	"context"
	"fmt"
	"net"
	"time"
)

// Serving: anima and its fakes kept running for an outside observer (scripts/stack-check
// points a real Prometheus at it).
const (
	serveUsers    = 3                  // allowed users the conversation cycles through
	serveStranger = int64(699_999_999) // a sender anima does not talk to
)

// metricsListen is the metrics.listen anima gets: --metrics-listen when serving (a fixed
// address someone scrapes), else any free port.
func (lt *loadtest) metricsListen() string {
	if lt.o.serve {
		return lt.o.listen
	}
	return "127.0.0.1:0"
}

// serve starts anima against the fakes, prints the fakes' URLs and anima's metrics
// address, then keeps a conversation going until ctx ends: every lt.o.every a message
// from one of serveUsers allowed users, and every fifth time a /status command and a
// message from a stranger, so replies, commands and ignored senders all have series.
func (lt *loadtest) serve(ctx context.Context) error {
	if lt.o.listen == "" {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		lt.o.listen = addr
	}
	if lt.o.mcp == "" {
		mcp, err := selfMCP()
		if err != nil {
			return err
		}
		lt.o.mcp = mcp
	}
	f, err := newFakes()
	if err != nil {
		return err
	}
	defer f.close()
	users := make([]int64, serveUsers)
	for i := range users {
		users[i] = firstUser + int64(i)
	}
	p, err := lt.launch(ctx, f, "serve", users)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer p.kill()
	lt.printf("telegram %s\nopenai %s\nmetrics %s\nlog %s\nready\n", f.tg.URL, f.ai.URL(), lt.o.listen, p.log)

	wctx, cancel := p.watch(ctx)
	defer cancel()
	t := time.NewTicker(lt.o.every)
	defer t.Stop()
	for n := 0; ; n++ {
		u := users[n%len(users)]
		f.tg.PushText(u, u, fmt.Sprintf("message %d: how is your day going?", n))
		if n%5 == 0 {
			f.tg.PushText(u, u, "/status")
			f.tg.PushText(serveStranger, serveStranger, "hello? who are you?")
		}
		select {
		case <-t.C:
		case <-wctx.Done():
			if ctx.Err() == nil { // anima exited on its own
				return lt.procErr(p, wctx, fmt.Errorf("while serving: %w", context.Cause(wctx)))
			}
			if _, err := p.stop(); err != nil {
				return lt.procErr(p, context.Background(), fmt.Errorf("stop: %w", err))
			}
			lt.printf("stopped after %d messages\n", n+1)
			return nil
		}
	}
}

// freeAddr returns a loopback address with a port nobody listened on a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	return addr, nil
}
