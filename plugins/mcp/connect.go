package mcp

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateAfter is how long a stdio child has to exit after its stdin closes before it
// is sent SIGTERM (and its process group SIGKILL after that).
const terminateAfter = 500 * time.Millisecond

// transport returns how to reach the server of cfg: a stdio child in a process group of
// its own, or streamable HTTP. stop ends the child's whole group (npx and the node it
// starts); it is a no-op for HTTP.
func transport(cfg Server) (mcp.Transport, func(), error) {
	if len(cfg.Command) == 0 {
		if cfg.URL == "" {
			return nil, nil, errors.New("neither command nor url is set")
		}
		hc := &http.Client{Transport: headerTransport{headers: cfg.Headers, next: bodyLimit{max: int64(cfg.Limits.MessageBytes), next: http.DefaultTransport}}, CheckRedirect: checkRedirect}
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: 2}, func() {}, nil
	}
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
	}
	ownGroup(cmd)
	var once sync.Once
	stop := func() { once.Do(func() { killGroup(cmd) }) }
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}, stop, nil
}

// headerTransport adds the configured headers to every request to an HTTP server.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.next.RoundTrip(r)
}
