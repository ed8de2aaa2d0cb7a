package cognition

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/ogg"
	"github.com/anima-bot/anima/brain/provider"
)

var _ brain.Speaker = (*Cognition)(nil)

// speechCharsPerSecond is how fast a voice reads, to tell a reply's length before it is
// spoken: about 150 words a minute.
const speechCharsPerSecond = 15

// speechTokensPerChar charges speech to the daily budget and the user's share: a token
// per character spoken (OpenAI bills its speech models by the input's characters or
// tokens and the audio's length; a character is between the two).
const speechTokensPerChar = 1

// Bounds on a voice note's size, to read the endpoint's answer into a buffer no larger
// than the reply it speaks can plausibly need: Opus voice is 24–48 kbit/s, so
// speechBytesPerSecond (128 kbit/s, music quality) is four times the most a voice takes;
// the reply's estimated length is doubled for a slow voice or long pauses, and
// speechBytesSlack covers the Ogg headers and a short reply's padding. A 60 s reply (the
// default voice.max_length) may so be at most 2 MB; 200 characters (13 s) at most 500 KB.
const (
	speechBytesPerSecond = 16_000
	speechBytesSlack     = 64 << 10
	speechFirstRead      = 32 << 10 // the buffer's first size when the length is not declared
)

// speechCap is the most bytes read for a reply estimated to last est.
func speechCap(est time.Duration) int {
	return speechBytesSlack + int(2*est.Seconds()*speechBytesPerSecond)
}

// speechOffAfter consecutive answers saying the endpoint cannot speak (404, an unknown
// model, an answer that is not Ogg/Opus) turn speech off for the process: one could be a
// proxy's error page, three in a row with nothing else between are the endpoint.
const speechOffAfter = 3

// The speech breaker: speechBreakerThreshold consecutive failed speech requests (timeout,
// 429, 5xx, a transport error, an answer cut or too long) open it, and replies then go as
// text at once; one reply may probe every speechProbeGap, and its success closes it. The
// gap is longer than the model's: a probe of a stalled endpoint holds its reply for
// SpeechTimeout, and a reply held back is a cost text does not have.
const (
	speechBreakerThreshold = 3
	speechProbeGap         = 30 * time.Second
)

// Speech outcomes (the outcome label of anima_speech_requests_total).
const (
	speechOK          = "ok"
	speechTooLong     = "too_long"    // refused: longer than MaxSpeech
	speechLimited     = "limited"     // refused: the user's speech, share or the budget spent
	speechFailed      = "failed"      // the request failed (4xx, 5xx, timeout, a body cut or too long)
	speechUnsupported = "unsupported" // the answer says the endpoint cannot speak (speechOffAfter in a row: off)
	speechUnavailable = "unavailable" // not sent: the speech breaker is open
)

// errSpeechUnavailable is Speak's error while the speech breaker is open. It wraps
// brain.ErrSpeechUnsupported: for now the endpoint cannot speak, and the reply goes as
// text without a warning each time (the breaker's opening was logged).
var errSpeechUnavailable = fmt.Errorf("%w: the speech endpoint is failing (speech breaker open)", brain.ErrSpeechUnsupported)

// errNotOgg marks an answer that is not Ogg/Opus.
var errNotOgg = errors.New("the answer is not Ogg/Opus")

// speech is what Speak keeps: its metrics, its breaker, the run of answers saying the
// endpoint cannot speak, and whether speech is off.
type speech struct {
	m   *speechMetrics
	brk *provider.Breaker
	bad atomic.Int32 // consecutive answers saying the endpoint cannot speak
	off atomic.Bool
}

func (c *Cognition) newSpeech(reg prometheus.Registerer) *speech {
	s := &speech{m: newSpeechMetrics(reg)}
	s.brk = provider.NewBreaker(speechBreakerThreshold, speechProbeGap, func(open bool, since time.Time) {
		if open {
			s.m.breakerOpen.Set(1)
			c.log.Warn("speech circuit breaker open: replies go as text", "probe_every", speechProbeGap)
			return
		}
		s.m.breakerOpen.Set(0)
		c.log.Info("speech circuit breaker closed: replies are spoken again", "outage", c.clock.Now().Sub(since).Round(time.Second))
	})
	return s
}

// Speak implements brain.Speaker: text, made sayable (Markdown and links left out), is
// spoken by SpeechModel on the endpoint's /audio/speech as Ogg/Opus, and charged to user
// — its characters to the daily budget and their share, its length to their daily
// speech. A reply estimated past MaxSpeech, or for a user whose speech or share is spent
// (or when the budget is), is refused (brain.ErrSpeechRefused) before any request.
//
// The request, the audio read with it, is bounded by SpeechTimeout, and the audio by
// speechCap of the reply's length: past it the read stops. Failed requests count on the
// speech breaker; while it is open, Speak fails at once (brain.ErrSpeechUnsupported,
// wrapped) but for a probe every speechProbeGap. speechOffAfter answers in a row that
// say the endpoint cannot speak (404, an unknown model, an answer that is not Ogg/Opus)
// turn speech off for the process (brain.ErrSpeechUnsupported); a single one fails only
// its reply. Every failure leaves the reply to go as text.
func (c *Cognition) Speak(ctx context.Context, user int64, text string) (brain.Voice, error) {
	s := c.speech
	if s == nil || s.off.Load() {
		return brain.Voice{}, brain.ErrSpeechUnsupported
	}
	said := Sayable(text)
	chars := utf8.RuneCountInString(said)
	est := time.Duration(chars) * time.Second / speechCharsPerSecond
	switch {
	case chars == 0:
		return brain.Voice{}, fmt.Errorf("%w: nothing to say", brain.ErrSpeechRefused)
	case est > c.cfg.MaxSpeech:
		s.m.requests.WithLabelValues(speechTooLong).Inc()
		return brain.Voice{}, fmt.Errorf("%w: about %s of speech, over %s", brain.ErrSpeechRefused, est.Round(time.Second), c.cfg.MaxSpeech)
	case c.budget.spent() || c.budget.usedUp(user):
		s.m.requests.WithLabelValues(speechLimited).Inc()
		return brain.Voice{}, fmt.Errorf("%w: the daily budget or the user's share is spent", brain.ErrSpeechRefused)
	case !c.budget.speechAllowed(user, est):
		s.m.requests.WithLabelValues(speechLimited).Inc()
		c.refused.Refused(brain.LimitUserSpeech)
		return brain.Voice{}, fmt.Errorf("%w: the user's daily speech (%s) is spent", brain.ErrSpeechRefused, c.cfg.DailyUserSpeech)
	}
	if !s.brk.Allow(c.clock.Now(), true) {
		s.m.requests.WithLabelValues(speechUnavailable).Inc()
		return brain.Voice{}, errSpeechUnavailable
	}
	began := time.Now()
	data, err := c.synthesize(ctx, said, speechCap(est))
	s.m.duration.Observe(time.Since(began).Seconds())
	var d time.Duration
	if err == nil {
		if d, err = ogg.Duration(data); err != nil {
			err = fmt.Errorf("speak: %w (%d bytes): %w", errNotOgg, len(data), err)
		}
	}
	if err != nil {
		return brain.Voice{}, c.speechFailed(ctx, err)
	}
	s.brk.Success()
	s.bad.Store(0)
	s.m.requests.WithLabelValues(speechOK).Inc()
	s.m.chars.Add(float64(chars))
	s.m.audio.Add(d.Seconds())
	s.m.bytes.Add(float64(len(data)))
	tokens := chars * speechTokensPerChar
	c.budget.add(tokens)
	c.budget.chargeSpeech(user, d, tokens)
	return brain.Voice{Audio: data, Duration: d, Bytes: len(data)}, nil
}

// speechFailed books a failed speech request on the breaker and the run of answers saying
// the endpoint cannot speak, and returns its error: brain.ErrSpeechUnsupported (wrapped)
// once that run reaches speechOffAfter and speech is off.
func (c *Cognition) speechFailed(ctx context.Context, err error) error {
	s := c.speech
	if ctx.Err() != nil { // the caller gave up: no verdict on the endpoint
		s.brk.Release()
		s.m.requests.WithLabelValues(speechFailed).Inc()
		return err
	}
	notOgg := errors.Is(err, errNotOgg)
	cannot := notOgg || cannotSpeak(err)
	if _, retryable := provider.Classify(err); notOgg || retryable && !cannot {
		// An answer that is not audio is a failure too: most often a proxy's error page.
		s.brk.Failure(c.clock.Now())
	} else {
		s.brk.Success() // the endpoint answered; the request was wrong
	}
	if !cannot {
		s.bad.Store(0)
		s.m.requests.WithLabelValues(speechFailed).Inc()
		return err
	}
	s.m.requests.WithLabelValues(speechUnsupported).Inc()
	if n := s.bad.Add(1); n < speechOffAfter {
		c.log.Warn("the endpoint's answer says it cannot speak; this reply goes as text", "model", c.cfg.SpeechModel, "in_a_row", n, "err", err)
		return err
	}
	if s.off.CompareAndSwap(false, true) {
		s.m.off.Set(1)
		c.log.Warn("the endpoint cannot speak; replies go as text until restart", "model", c.cfg.SpeechModel, "in_a_row", speechOffAfter, "err", err)
	}
	return fmt.Errorf("%w: %w", brain.ErrSpeechUnsupported, err)
}

// synthesize asks the endpoint to speak said as Ogg/Opus and reads the audio, at most
// limit bytes, all within SpeechTimeout. An answer that is not Ogg/Opus wraps errNotOgg.
func (c *Cognition) synthesize(ctx context.Context, said string, limit int) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.SpeechTimeout)
	defer cancel()
	resp, err := c.client.CreateSpeech(rctx, openai.CreateSpeechRequest{
		Model: openai.SpeechModel(c.cfg.SpeechModel), Input: said, Voice: openai.SpeechVoice(c.cfg.Voice),
		Instructions: c.cfg.VoiceStyle, ResponseFormat: openai.SpeechResponseFormatOpus,
	})
	if err != nil {
		return nil, fmt.Errorf("speak: %w", redactProvider(err))
	}
	defer resp.Close() // unread, the rest is not drained: the connection is dropped
	declared := int64(-1)
	if v := resp.Header().Get("Content-Length"); v != "" {
		if n, perr := strconv.ParseInt(v, 10, 64); perr == nil {
			declared = n
		}
	}
	data, err := readSpeech(resp, declared, limit)
	if err != nil {
		return nil, fmt.Errorf("speak: read the audio: %w", err)
	}
	return data, nil
}

// errSpeechTooBig is an answer longer than the reply can plausibly be.
var errSpeechTooBig = errors.New("the audio is longer than the reply can be")

// readSpeech reads an Ogg answer of at most limit bytes from r, whose declared length (-1:
// none) sizes the buffer. A declared length past limit is refused before reading; an
// undeclared one is read in a buffer that grows to limit and no further, and the read
// stops there. An answer that does not open with an Ogg page is errNotOgg after its first
// four bytes.
func readSpeech(r io.Reader, declared int64, limit int) ([]byte, error) {
	if declared > int64(limit) {
		return nil, fmt.Errorf("%w: %d bytes declared, over %d", errSpeechTooBig, declared, limit)
	}
	size := speechFirstRead
	if declared >= 4 {
		size = int(declared) + 1 // one more to see the end without growing
	}
	buf := make([]byte, 0, min(size, limit+1))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, fmt.Errorf("%w: over %d bytes", errSpeechTooBig, limit)
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
				return nil, fmt.Errorf("%w: over %d bytes", errSpeechTooBig, limit)
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
