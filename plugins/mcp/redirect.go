package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// errOtherOrigin is why a request to an HTTP server stopped at a redirect: its target is
// another origin (scheme, host or port), which the configured headers and the secrets of
// the URL must not reach.
var errOtherOrigin = errors.New("refused a redirect to another origin")

// maxRedirects is how many redirects within the server's origin a request follows.
const maxRedirects = 10

// checkRedirect is the CheckRedirect of an HTTP server's client. It refuses a redirect to
// another origin than the configured URL's (headerTransport adds the configured headers
// to every request, redirected ones included, and net/http would send the URL, query and
// all, as the Referer), follows up to maxRedirects within it, and sends no Referer at all.
func checkRedirect(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer") // net/http sets it before calling CheckRedirect
	if from, to := origin(via[0].URL), origin(req.URL); from != to {
		return fmt.Errorf("%w: %s sent it to %s (point the url at the server itself)", errOtherOrigin, from, to)
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// origin is u's scheme://host:port, lower case and with the scheme's default port.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
