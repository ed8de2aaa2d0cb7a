package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
