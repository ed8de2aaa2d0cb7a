package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anima-bot/anima/brain"
)

// Manager starts, supervises and stops the configured MCP servers and keeps their tools
// in a Sink. It is safe for concurrent use.
type Manager struct {
	servers []*server
	sink    Sink
	log     *slog.Logger
	m       *metrics
	opts    Options
	procs   *procFile // the stdio servers' process groups
	// settling closes Settled once every server's first start has ended.
	settling *settling
	// settleBound is the longest a server's first start may take (twice the longest
	// timeout: to connect, then to list); began is when Run started them.
	settleBound time.Duration
	began       atomic.Pointer[time.Time]
}

// New returns a manager of servers that publishes their tools to sink (nil: nowhere, as
// `anima mcp list` needs). Nothing starts before Run.
func New(servers []Server, sink Sink, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxResult <= 0 {
		opts.MaxResult = 8 << 10
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff < opts.Backoff {
		opts.MaxBackoff = max(time.Minute, opts.Backoff)
	}
	if opts.Wait == nil {
		opts.Wait = brain.Sleep
	}
	m := &Manager{sink: sink, log: slog.New(redactHandler{opts.Logger.Handler()}).With("component", "mcp"), m: newMetrics(opts.Registerer), opts: opts}
	m.procs = newProcFile(opts.Pids, m.log, len(servers))
	m.settling = newSettling(len(servers))
	for _, cfg := range servers {
		cfg.Limits = cfg.Limits.withDefaults()
		s := &server{cfg: cfg, mgr: m, log: m.log.With("server", cfg.Name), changed: make(chan struct{}, 1)}
		// Every server's series exist from the start, at 0, so that dashboards and alerts
		// see a server that never came up.
		m.m.up.WithLabelValues(cfg.Name).Set(0)
		m.m.restarts.WithLabelValues(cfg.Name)
		m.m.seconds.WithLabelValues(cfg.Name)
		m.servers = append(m.servers, s)
		m.settleBound = max(m.settleBound, 2*cfg.Timeout)
	}
	return m
}

// Status is what the operator sees of one server (/status, /readyz).
type Status struct {
	Name  string
	Up    bool
	Since time.Time // when it last came up or went down
	Tools int       // tools offered from it
	Err   string    // why it is down; "" when up or not started yet
}

// Status reports every server, in configuration order.
func (m *Manager) Status() []Status {
	out := make([]Status, len(m.servers))
	for i, s := range m.servers {
		s.mu.Lock()
		out[i] = Status{Name: s.cfg.Name, Up: s.sess != nil, Since: s.since, Tools: s.ntools, Err: s.lastErr}
		s.mu.Unlock()
	}
	return out
}

// Run ends what the stdio servers of a run killed with SIGKILL left (Options.Pids),
// starts every server concurrently, restarts each with backoff when it dies, and stops
// them all when ctx ends. It returns nil once every server has stopped: a server that
// cannot start is logged and retried, never fatal.
func (m *Manager) Run(ctx context.Context) error {
	began := time.Now()
	m.began.Store(&began)
	m.procs.reap()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(func() { s.supervise(ctx) })
	}
	wg.Wait()
	return nil
}

// server is one supervised MCP server and its live session.
type server struct {
	cfg     Server
	mgr     *Manager
	log     *slog.Logger
	changed chan struct{} // tools/list_changed arrived
	settled sync.Once     // the first start has ended (Manager.Settled)

	mu      sync.Mutex
	sess    *mcp.ClientSession // nil while down
	since   time.Time
	ntools  int
	lastErr string
	series  map[string]bool // tools with series of their own in anima_mcp_calls_total
}

// supervise serves s until ctx ends, restarting it after each failure: the delay starts
// at Options.Backoff, doubles to MaxBackoff, and is reset after a minute up.
func (s *server) supervise(ctx context.Context) {
	delay := s.mgr.opts.Backoff
	for {
		start := time.Now()
		err := s.serve(ctx)
		if ctx.Err() != nil {
			s.log.Info("mcp server stopped")
			return
		}
		if time.Since(start) > time.Minute {
			delay = s.mgr.opts.Backoff
		}
		s.mgr.m.restarts.WithLabelValues(s.cfg.Name).Inc()
		s.log.Warn("mcp server down; its tools are withdrawn until it is back", "err", err, "retry_in", delay)
		if s.mgr.opts.Wait(ctx, delay) != nil {
			return
		}
		delay = min(2*delay, s.mgr.opts.MaxBackoff)
	}
}

// serve runs one session: connect, publish the tools, and follow tools/list_changed
// until the session ends (the error says why) or ctx does.
func (s *server) serve(ctx context.Context) (err error) {
	sess, stop, err := s.connect(ctx)
	if err != nil {
		s.down(err)
		return err
	}
	defer func() {
		s.down(err)
		stop()
	}()
	s.mu.Lock()
	s.sess, s.since, s.lastErr = sess, time.Now(), ""
	s.mu.Unlock()
	co := &coalescer{every: s.cfg.Limits.RefreshEvery.Std(), last: time.Now()}
	defer co.stop()
	if _, err := s.refresh(ctx, sess, true); err != nil {
		return err
	}
	s.mgr.settling.settle(&s.settled)
	tick := time.NewTicker(summaryEvery)
	defer tick.Stop()
	var sum summary
	defer sum.log(s.log)
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	for {
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("connection closed")
			}
			return fmt.Errorf("session ended: %w", err)
		case <-s.changed:
			co.notified(time.Now())
		case <-co.due():
			co.started(time.Now())
			r, err := s.refresh(ctx, sess, false)
			if err != nil {
				_ = sess.Close()
				<-done
				return err
			}
			sum.refreshes, sum.last = sum.refreshes+1, r
		case <-tick.C:
			sum.log(s.log)
		case <-ctx.Done():
			_ = sess.Close()
			<-done
			return ctx.Err()
		}
	}
}

// connect starts the server and initialises a session with it. stop ends what connect
// started (a stdio child's whole process group); the caller calls it after the session.
func (s *server) connect(ctx context.Context) (*mcp.ClientSession, func(), error) {
	t, stop, err := s.transport()
	if err != nil {
		return nil, nil, err
	}
	t, stop = s.mgr.track(t, stop)
	client := mcp.NewClient(&mcp.Implementation{Name: "anima", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.changed <- struct{}{}:
			default: // a refresh is already due
			}
		},
	})
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	sess, err := client.Connect(cctx, t, nil)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("start %s: %w", s.cfg.Name, err)
	}
	return sess, func() { _ = sess.Close(); stop() }, nil
}

// down marks s down for why and withdraws its tools.
func (s *server) down(why error) {
	s.mu.Lock()
	wasUp := s.sess != nil
	s.sess, s.ntools = nil, 0
	s.since = time.Now()
	if why != nil && !errors.Is(why, context.Canceled) {
		s.lastErr = redact(why).Error()
	}
	s.mu.Unlock()
	s.mgr.m.up.WithLabelValues(s.cfg.Name).Set(0)
	s.mgr.settling.settle(&s.settled)
	if wasUp && s.mgr.sink != nil {
		s.mgr.sink.SetTools(groupName(s.cfg.Name), nil)
	}
}

// session returns the live session, or nil while the server is down.
func (s *server) session() *mcp.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// groupName is the registry group of a server's tools.
func groupName(server string) string { return "mcp:" + server }

// transport is transport(s.cfg), or the test's in-process server when dial is set.
func (s *server) transport() (mcp.Transport, func(), error) {
	if s.cfg.dial != nil {
		return s.cfg.dial(), func() {}, nil
	}
	return transport(s.cfg)
}
