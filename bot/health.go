package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

// Health asks the running instance whose metrics server listens on listen (the
// metrics.listen of its configuration) whether it is ready: nil when its /readyz answers
// 200 within timeout, otherwise an error saying why in one line. A wildcard listen
// address (0.0.0.0, ::, or no host) is asked on the loopback address of its family. It
// is the container health check (`anima health`), so it needs no curl.
func Health(ctx context.Context, listen string, timeout time.Duration) error {
	if listen == "" {
		return errors.New("metrics.listen is empty: the health check asks the metrics server's /readyz; set metrics.listen")
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("metrics.listen %q: %w", listen, err)
	}
	if port == "0" {
		return fmt.Errorf("metrics.listen %q has port 0 (chosen at start): give it a fixed port to check it", listen)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	target := "http://" + net.JoinHostPort(host, port) + "/readyz"
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("health check request: %w", err)
	}
	// No proxy (the instance is local) and no keep-alive (one request, then exit).
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s did not answer within %v", target, timeout)
		}
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the repeated "Get <url>"
		}
		return fmt.Errorf("%s: %w (is anima running?)", target, err)
	}
	defer resp.Body.Close()
	// The body is a fixed text ("not ready", then one line per check), never an error's.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		return fmt.Errorf("%s answered %s: %s", target, resp.Status, strings.Join(lines, "; "))
	}
	return nil
}
