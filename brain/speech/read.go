package speech

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/provider"
)

// Bounds on a voice note's size, to read the endpoint's answer into a buffer no larger
// than the reply it speaks can plausibly need: Opus voice is 24–48 kbit/s, so
// bytesPerSecond (128 kbit/s, music quality) is four times the most a voice takes; the
// reply's estimated length is doubled for a slow voice or long pauses, and bytesSlack
// covers the Ogg headers and a short reply's padding. A 60 s reply (the default
// voice.max_length) may so be at most 2 MB; 200 characters (13 s) at most 500 KB.
const (
	bytesPerSecond = 16_000
	bytesSlack     = 64 << 10
	firstRead      = 32 << 10 // the buffer's first size when the length is not declared
)

// readCap is the most bytes read for a reply estimated to last est.
func readCap(est time.Duration) int {
	return bytesSlack + int(2*est.Seconds()*bytesPerSecond)
}

// synthesize asks the endpoint to speak said as Ogg/Opus and reads the audio, at most
// limit bytes, all within Timeout. An answer that is not Ogg/Opus wraps errNotOgg.
func (s *Speech) synthesize(ctx context.Context, said string, limit int) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	resp, err := s.client.CreateSpeech(rctx, openai.CreateSpeechRequest{
		Model: openai.SpeechModel(s.cfg.Model), Input: said, Voice: openai.SpeechVoice(s.cfg.Voice),
		Instructions: s.cfg.Style, ResponseFormat: openai.SpeechResponseFormatOpus,
	})
	if err != nil {
		return nil, fmt.Errorf("speak: %w", provider.Redact(err))
	}
	defer resp.Close() // unread, the rest is not drained: the connection is dropped
	declared := int64(-1)
	if v := resp.Header().Get("Content-Length"); v != "" {
		if n, perr := strconv.ParseInt(v, 10, 64); perr == nil {
			declared = n
		}
	}
	data, err := readAudio(resp, declared, limit)
	if err != nil {
		return nil, fmt.Errorf("speak: read the audio: %w", err)
	}
	return data, nil
}

// errTooBig is an answer longer than the reply can plausibly be.
var errTooBig = errors.New("the audio is longer than the reply can be")

// readAudio reads an Ogg answer of at most limit bytes from r, whose declared length (-1:
// none) sizes the buffer. A declared length past limit is refused before reading; an
// undeclared one is read in a buffer that grows to limit and no further, and the read
// stops there. An answer that does not open with an Ogg page is errNotOgg after its first
// four bytes.
func readAudio(r io.Reader, declared int64, limit int) ([]byte, error) {
	if declared > int64(limit) {
		return nil, fmt.Errorf("%w: %d bytes declared, over %d", errTooBig, declared, limit)
	}
	size := firstRead
	if declared >= 4 {
		size = int(declared) + 1 // one more to see the end without growing
	}
	buf := make([]byte, 0, min(size, limit+1))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, fmt.Errorf("%w: over %d bytes", errTooBig, limit)
			}
			grown := make([]byte, len(buf), min(2*cap(buf), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) >= 4 && len(buf)-n < 4 && string(buf[:4]) != "OggS" {
			return nil, fmt.Errorf("%w: it begins %q", errNotOgg, buf[:4])
		}
		switch {
		case errors.Is(err, io.EOF):
			if len(buf) > limit {
				return nil, fmt.Errorf("%w: over %d bytes", errTooBig, limit)
			}
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
}

// cannotSpeak reports whether a failed speech request says the endpoint has no speech:
// 404 or 501 (no /audio/speech), or a 4xx naming an unknown or unsupported model.
func cannotSpeak(err error) bool {
	status := provider.Status(err)
	switch {
	case status == http.StatusNotFound || status == http.StatusNotImplemented:
		return true
	case status < 400 || status >= 500:
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "not supported") || strings.Contains(msg, "unsupported") ||
		strings.Contains(msg, "model") && (strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist"))
}
