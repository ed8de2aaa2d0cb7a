package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

// inProcess is a server named name that is s, served in this process over an in-memory
// pipe: each (re)start connects a new session.
func inProcess(name string, s *mcp.Server) Server {
	return Server{Name: name, Timeout: 30 * time.Second, dial: func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.Background(), st, nil); err != nil {
			panic(err)
		}
		return ct
	}}
}

// noop is a tool handler that answers nothing.
func noop(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

// addTools adds n tools named <prefix>NNN to s, each with a description of desc bytes.
func addTools(s *mcp.Server, prefix string, n, desc int) {
	for i := range n {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("%s%03d", prefix, i), Description: strings.Repeat("d", desc),
			InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	}
}

// TestListingLimits: a hostile server's listing is taken within the server's limits,
// each limit met with one log line at most, and the tools within them still offered.
func TestListingLimits(t *testing.T) {
	t.Parallel()
	var props []string
	for i := range 2000 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string"}`, i))
	}
	bigSchema := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	for _, tc := range []struct {
		name    string
		page    int // the server's page size; 0 is the SDK's 1000
		limits  Limits
		tools   func(s *mcp.Server)
		offered int
		logs    []string // each appears exactly once in the log
		check   func(t *testing.T, specs []brain.ToolSpec)
	}{
		{name: "tools past the limit refused with one line", limits: Limits{Tools: 10},
			tools: func(s *mcp.Server) { addTools(s, "t", 100, 10) }, offered: 10,
			logs: []string{`msg="mcp tools past the server's limit not offered" component=mcp server=x limit=10 refused=90`}},
		{name: "long description cut with a mark", limits: Limits{DescriptionBytes: 100},
			tools: func(s *mcp.Server) { addTools(s, "t", 1, 200_000) }, offered: 1,
			check: func(t *testing.T, specs []brain.ToolSpec) {
				d := specs[0].Description
				if !strings.HasSuffix(d, strings.Repeat("d", 100-len(cutMark))+cutMark) || len(d) > 200 {
					t.Errorf("description %q (%d bytes), want the first bytes and %q, 100 in all after the prefix", d, len(d), cutMark)
				}
			}},
		{name: "oversized schema refuses its tool",
			tools: func(s *mcp.Server) {
				addTools(s, "ok", 1, 10)
				s.AddTool(&mcp.Tool{Name: "huge", InputSchema: json.RawMessage(bigSchema)}, noop)
			}, offered: 1, logs: []string{"tool=huge", "more than limits.schema_bytes (32768)"}},
		{name: "overlong name refused",
			tools: func(s *mcp.Server) {
				addTools(s, "ok", 1, 10)
				addTools(s, strings.Repeat("n", 300), 1, 10)
			}, offered: 1, logs: []string{"its name is 303 bytes, more than 128"}},
		{name: "pages past the limit not followed", page: 1, limits: Limits{ListPages: 5},
			tools: func(s *mcp.Server) { addTools(s, "t", 30, 10) }, offered: 5,
			logs: []string{"more than 5 pages (limits.list_pages)"}},
		{name: "bytes past the limit not followed", page: 10, limits: Limits{ListBytes: 30 << 10},
			tools: func(s *mcp.Server) { addTools(s, "t", 100, 2000) }, offered: 20,
			logs: []string{"past limits.list_bytes (30720)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "1"}, &mcp.ServerOptions{PageSize: tc.page})
			tc.tools(s)
			srv := inProcess("x", s)
			srv.Limits = tc.limits
			e := start(t, srv)
			if got := e.sink.next(t); len(got) != tc.offered {
				t.Fatalf("%d tools offered, want %d (logs:\n%s)", len(got), tc.offered, e.logs)
			}
			if tc.check != nil {
				var specs []brain.ToolSpec
				for _, x := range e.sink.Tools(brain.ProfileChat) {
					if strings.HasPrefix(x.Spec().Name, "x_") {
						specs = append(specs, x.Spec())
					}
				}
				tc.check(t, specs)
			}
			e.stop()
			for _, want := range tc.logs {
				if n := strings.Count(e.logs.String(), want); n != 1 {
					t.Errorf("%q is logged %d times, want once:\n%s", want, n, e.logs)
				}
			}
			if n := strings.Count(e.logs.String(), "\n"); n > refusalLines+4 {
				t.Errorf("%d log lines, want at most %d:\n%s", n, refusalLines+4, e.logs)
			}
		})
	}
}

// countSink counts the times a server's tools were set and keeps the last names.
type countSink struct {
	mu    sync.Mutex
	sets  int
	last  []string
	tools []brain.Tool
}

func (c *countSink) SetTools(_ string, ts []brain.Tool) []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sets++
	c.tools, c.last = ts, nil
	for _, t := range ts {
		c.last = append(c.last, t.Spec().Name)
	}
	return nil
}

// toolLabels are the tool label values of anima_mcp_calls_total in reg.
func toolLabels(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != "anima_mcp_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tool" && !slices.Contains(out, l.GetValue()) {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestListChangedFloodCoalesced: a server that swaps its tool for a new one every 20 ms
// for 30 s (1,500 tools/list_changed) is listed at most once per refresh_every (5 s),
// the listing after its last change wins, the series of every withdrawn tool are gone
// (a call through a withdrawn tool counts under "(withdrawn)"), and the log holds the
// first listing's line and one summary for the minute, however many refreshes.
func TestListChangedFloodCoalesced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "first", InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
		sink, reg, logs := &countSink{}, prometheus.NewRegistry(), &braintest.Buffer{}
		mgr := New([]Server{inProcess("flood", s)}, sink, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.Run(ctx) }()
		synctest.Wait()
		if !slices.Equal(sink.last, []string{"flood_first"}) {
			t.Fatalf("offered %v at start, want [flood_first]", sink.last)
		}
		stale := sink.tools[0]

		start := time.Now()
		prev := "first"
		for i := range 1500 {
			next := fmt.Sprintf("gen%04d_%s", i, strings.Repeat("x", 100))
			s.RemoveTools(prev)
			s.AddTool(&mcp.Tool{Name: next, InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
			prev = next
			time.Sleep(20 * time.Millisecond)
		}
		flood := time.Since(start)
		time.Sleep(10 * time.Second) // past the trailing refresh
		synctest.Wait()

		sink.mu.Lock()
		sets, last := sink.sets, sink.last
		sink.mu.Unlock()
		if most := 2 + int(flood/defaultRefreshEvery); sets > most {
			t.Errorf("the tools were set %d times in %s of flood, want at most %d (one per %s)", sets, flood, most, defaultRefreshEvery)
		}
		if want := []string{toolName("flood", prev)}; !slices.Equal(last, want) {
			t.Errorf("offered %v after the flood, want %v (the last listing)", last, want)
		}
		if _, err := stale.Call(context.Background(), brain.ToolCall{Args: json.RawMessage(`{}`)}); err == nil {
			t.Error("a call of the withdrawn tool succeeded")
		}
		if got, want := toolLabels(t, reg), []string{withdrawn, prev}; !slices.Equal(got, want) {
			t.Errorf("%d tool labels %.3q…, want %q", len(got), got, want)
		}

		time.Sleep(summaryEvery) // the summary's minute is over
		synctest.Wait()
		if n := strings.Count(logs.String(), "\n"); n != 3 {
			t.Errorf("%d log lines, want 3 (up, the withdrawn tool's call, one summary):\n%s", n, logs)
		}
		if want := fmt.Sprintf("refreshes=%d ", sets-1); !strings.Contains(logs.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, logs)
		}
		cancel()
		<-done
	})
}

// TestBodyLimit: a url server's JSON body is capped in all, an SSE stream per event.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 10
	event := "data: " + strings.Repeat("e", limit/2) + "\n\n"
	for _, tc := range []struct {
		name, ctype, body string
		length            bool // send Content-Length
		tooLarge          bool
	}{
		{"json at the cap", "application/json", strings.Repeat("j", limit), true, false},
		{"json past the cap, announced", "application/json", strings.Repeat("j", limit+1), true, true},
		{"json past the cap, chunked", "application/json", strings.Repeat("j", 100*limit), false, true},
		{"sse: many events under the cap", "text/event-stream", strings.Repeat(event, 100), false, false},
		{"sse: CRLF events under the cap", "text/event-stream", strings.Repeat(strings.ReplaceAll(event, "\n", "\r\n"), 100), false, false},
		{"sse: one event past the cap", "text/event-stream", event + "data: " + strings.Repeat("e", limit) + "\n\n", false, true},
		{"sse: an event of many lines past the cap", "text/event-stream", strings.Repeat("data: "+strings.Repeat("e", 100)+"\n", 20) + "\n", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				if tc.length {
					w.Header().Set("Content-Length", fmt.Sprint(len(tc.body)))
				}
				_, _ = io.WriteString(w, tc.body)
			}))
			defer hs.Close()
			hc := &http.Client{Transport: bodyLimit{max: limit, next: http.DefaultTransport}}
			resp, err := hc.Get(hs.URL)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if got := errors.Is(err, errMessageTooLarge); got != tc.tooLarge {
				t.Errorf("err = %v, want too large: %v", err, tc.tooLarge)
			}
		})
	}
}

// TestHostileHTTPServer: a url server answering initialize with a 400 MB body or SSE
// event fails to start once past limits.message_bytes (1 MiB) and is retried with
// backoff, instead of being read whole: it could write less than the SDK's own 16 MiB
// event cap (what the sockets buffer besides the 1 MiB read). The SDK keeps the error of
// a JSON body, which the status shows; it drops an SSE stream's.
func TestHostileHTTPServer(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for _, tc := range []struct {
		name, ctype, prefix string
		why                 string // in the status
	}{
		{"json body", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"x":"`, errMessageTooLarge.Error()},
		{"sse event", "text/event-stream", "event: message\ndata: ", "initialize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var written atomic.Int64
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				w.Header().Set("Content-Type", tc.ctype)
				_, _ = io.WriteString(w, tc.prefix)
				chunk := strings.Repeat("A", 64<<10)
				for range 400 << 20 / len(chunk) { // 400 MB unless the client stops reading
					n, err := io.WriteString(w, chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			t.Cleanup(hs.Close)
			e := startHold(t, 1, Server{Name: "big", URL: hs.URL, Timeout: 10 * time.Second, Limits: Limits{MessageBytes: limit}})
			select {
			case <-e.waits:
			case <-time.After(20 * time.Second):
				t.Fatal("the server never failed")
			}
			if st := e.mgr.Status(); st[0].Up || !strings.Contains(st[0].Err, tc.why) {
				t.Errorf("Status = %+v, want down: %s", st[0], tc.why)
			}
			hs.Close() // the handler has returned
			if n := written.Load(); n >= 16<<20 {
				t.Errorf("the server wrote %d bytes before anima stopped reading, want less than 16 MiB", n)
			}
		})
	}
}

// headerLog records the Authorization and Referer of each request a server received.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (h *headerLog) record(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, fmt.Sprintf("%s %s Authorization=%q Referer=%q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("Referer")))
}

func (h *headerLog) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// secretURL is u (http://127.0.0.1:port) with a password and an API key in the query.
func secretURL(u, path string) string {
	return strings.Replace(u, "http://", "http://user:SECRETU@", 1) + path + "?api_key=SECRETQ"
}

// noSecret fails t if text shows any of the secrets of secretURL or the header.
func noSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{"SECRETU", "SECRETQ", "SECRETH"} {
		if strings.Contains(text, s) {
			t.Errorf("%s shows %s:\n%s", what, s, text)
		}
	}
}

// TestRedirectToOtherOrigin: a server that answers 307 to another origin (another port)
// reaches there with neither the configured Authorization nor a Referer holding the
// URL's query: the redirect is refused, with an error that says so and shows no secret,
// in `anima mcp list` (List), in the log line of each retry and in Status (/status).
func TestRedirectToOtherOrigin(t *testing.T) {
	t.Parallel()
	var other headerLog
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.record(r)
		http.Error(w, "thanks", http.StatusInternalServerError)
	}))
	t.Cleanup(elsewhere.Close)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal?copy=SECRETQ", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirecting.Close)
	srv := Server{Name: "web", URL: secretURL(redirecting.URL, "/mcp"), Headers: map[string]string{"Authorization": "Bearer SECRETH"},
		Timeout: 5 * time.Second}

	l := New([]Server{srv}, nil, Options{}).List(context.Background())
	if l[0].Err == nil || !strings.Contains(l[0].Err.Error(), "refused a redirect to another origin") ||
		!strings.Contains(l[0].Err.Error(), "sent it to "+elsewhere.URL+" (") {
		t.Errorf("List: err = %v, want the redirect to %s refused", l[0].Err, elsewhere.URL)
	} else {
		noSecret(t, "List's error", l[0].Err.Error())
	}

	e := startHold(t, 2, srv)
	<-e.waits
	<-e.waits // the first retry failed too
	st := e.mgr.Status()
	if !strings.Contains(st[0].Err, "refused a redirect to another origin") {
		t.Errorf("Status err = %q, want the redirect refused", st[0].Err)
	}
	noSecret(t, "Status", st[0].Err)
	if logs := e.logs.String(); strings.Count(logs, "refused a redirect") < 2 {
		t.Errorf("want a log line for the start and the retry that were refused:\n%s", logs)
	} else {
		noSecret(t, "the log", logs)
	}
	if got := other.all(); len(got) > 0 {
		t.Errorf("the other origin received %d requests, want none:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestRedirectSameOrigin: a redirect within the server's origin is followed with the
// configured headers kept, and no request carries a Referer.
func TestRedirectSameOrigin(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	testTools(s)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var seen headerLog
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.record(r)
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/mcp?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	e := start(t, Server{Name: "web", URL: secretURL(hs.URL, "/old"), Headers: map[string]string{"Authorization": "Bearer k"},
		Tools: []string{"echo"}, Timeout: 5 * time.Second})
	if got := e.sink.next(t); len(got) != 1 {
		t.Fatalf("offered %v, want web_echo", got)
	}
	got := seen.all()
	redirected := 0
	for _, r := range got {
		if strings.Contains(r, " /mcp?") {
			redirected++
		}
		if !strings.Contains(r, `Authorization="Bearer k"`) || !strings.Contains(r, `Referer=""`) {
			t.Errorf("want the configured Authorization and no Referer on every request: %s", r)
		}
	}
	if redirected == 0 {
		t.Errorf("no request followed the redirect:\n%s", strings.Join(got, "\n"))
	}
}

// TestUnreachableURLRedacted: net/http's error for a server that cannot be reached
// quotes its URL, query and all; the log line, Status and List show it redacted.
func TestUnreachableURLRedacted(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // its port refuses connections now
	srv := Server{Name: "web", URL: secretURL(gone.URL, "/mcp"), Timeout: 5 * time.Second}
	l := New([]Server{srv}, nil, Options{}).List(context.Background())
	if l[0].Err == nil || !strings.Contains(l[0].Err.Error(), "http://***@127.0.0.1") || !strings.Contains(l[0].Err.Error(), "/mcp?***") {
		t.Errorf("List: err = %v, want the URL redacted", l[0].Err)
	} else {
		noSecret(t, "List's error", l[0].Err.Error())
	}
	e := startHold(t, 1, srv)
	<-e.waits
	noSecret(t, "Status", e.mgr.Status()[0].Err)
	if logs := e.logs.String(); !strings.Contains(logs, "/mcp?***") {
		t.Errorf("no log line with the redacted URL:\n%s", logs)
	} else {
		noSecret(t, "the log", logs)
	}
}
