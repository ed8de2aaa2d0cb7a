package mcp

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// errMessageTooLarge is wrapped by the read error of a response body (or an SSE event)
// from a url server that is larger than its limits.message_bytes.
var errMessageTooLarge = errors.New("message from the MCP server too large")

// bodyLimit caps what one response of a url server can make anima read: a JSON body at
// max bytes in all, an SSE stream (text/event-stream, long-lived) at max bytes per event.
// Past the cap the body's Read fails, so the SDK fails that request instead of buffering
// it whole (it reads a JSON body with io.ReadAll).
type bodyLimit struct {
	max  int64
	next http.RoundTripper
}

func (t bodyLimit) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if resp.ContentLength > t.max {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes, more than %d", errMessageTooLarge, resp.ContentLength, t.max)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &limitedBody{ReadCloser: resp.Body, max: t.max, sse: mt == "text/event-stream"}
	return resp, nil
}

// limitedBody fails a Read past max bytes: bytes of the whole body, or for an SSE stream
// bytes since the last event ended (a blank line; a '\r' is not counted as a line end,
// which only makes a stream of bare-CR lines meet the cap sooner).
type limitedBody struct {
	io.ReadCloser
	max    int64
	sse    bool
	n      int64 // bytes counted so far (since the last event, for SSE)
	lineNL bool  // the last byte counted ended a line
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.sse {
		b.n += int64(n)
	} else {
		for _, c := range p[:n] {
			switch {
			case c == '\r':
				continue
			case c == '\n' && b.lineNL:
				b.n = 0 // a blank line: the event ended
				continue
			}
			b.lineNL = c == '\n'
			if b.n++; b.n > b.max {
				break
			}
		}
	}
	if b.n > b.max {
		return 0, fmt.Errorf("%w: more than %d bytes", errMessageTooLarge, b.max)
	}
	return n, err
}
