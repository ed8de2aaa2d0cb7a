package cognition

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/ogg"
)

var _ brain.Speaker = (*Cognition)(nil)

// speechCharsPerSecond is how fast a voice reads, to tell a reply's length before it is
// spoken: about 150 words a minute.
const speechCharsPerSecond = 15

// speechTokensPerChar charges speech to the daily budget and the user's share: a token
// per character spoken (OpenAI bills its speech models by the input's characters or
// tokens and the audio's length; a character is between the two).
const speechTokensPerChar = 1

// maxSpeechBytes bounds the audio read from the endpoint: a minute of Opus is about
// 200 KB, so this is ample for any voice.max_length a voice note can have.
const maxSpeechBytes = 20 << 20

// Speech outcomes (the outcome label of anima_speech_requests_total).
const (
	speechOK          = "ok"
	speechTooLong     = "too_long"    // refused: longer than MaxSpeech
	speechLimited     = "limited"     // refused: the user's speech, share or the budget spent
	speechFailed      = "failed"      // the request failed (4xx, 5xx, timeout)
	speechUnsupported = "unsupported" // the endpoint cannot speak: speech is off for the process
)

// speech is what Speak keeps: its metrics, and whether the endpoint said it cannot speak.
type speech struct {
	m   *speechMetrics
	off atomic.Bool
}

// Speak implements brain.Speaker: text, made sayable (Markdown and links left out), is
// spoken by SpeechModel on the endpoint's /audio/speech as Ogg/Opus, and charged to user
// — its characters to the daily budget and their share, its length to their daily
// speech. A reply estimated past MaxSpeech, or for a user whose speech or share is spent
// (or when the budget is), is refused (brain.ErrSpeechRefused) before any request. An
// endpoint that answers "not supported" (404, an unknown model, an answer that is not
// Ogg/Opus) turns speech off for the process (brain.ErrSpeechUnsupported).
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
	began := time.Now()
	data, err := c.synthesize(ctx, said)
	s.m.duration.Observe(time.Since(began).Seconds())
	var d time.Duration
	if err == nil {
		if d, err = ogg.Duration(data); err != nil {
			err = fmt.Errorf("%w: the answer is not Ogg/Opus (%d bytes): %w", brain.ErrSpeechUnsupported, len(data), err)
		}
	}
	if err != nil {
		outcome := speechFailed
		if errors.Is(err, brain.ErrSpeechUnsupported) {
			outcome = speechUnsupported
			if s.off.CompareAndSwap(false, true) {
				c.log.Warn("the endpoint cannot speak; replies go as text until restart", "model", c.cfg.SpeechModel, "err", err)
			}
		}
		s.m.requests.WithLabelValues(outcome).Inc()
		return brain.Voice{}, err
	}
	s.m.requests.WithLabelValues(speechOK).Inc()
	s.m.chars.Add(float64(chars))
	s.m.audio.Add(d.Seconds())
	s.m.bytes.Add(float64(len(data)))
	tokens := chars * speechTokensPerChar
	c.budget.add(tokens)
	c.budget.chargeSpeech(user, d, tokens)
	return brain.Voice{Audio: data, Duration: d, Bytes: len(data)}, nil
}

// synthesize asks the endpoint to speak said as Ogg/Opus and reads the audio. An answer
// that the endpoint cannot speak wraps brain.ErrSpeechUnsupported.
func (c *Cognition) synthesize(ctx context.Context, said string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.client.CreateSpeech(rctx, openai.CreateSpeechRequest{
		Model: openai.SpeechModel(c.cfg.SpeechModel), Input: said, Voice: openai.SpeechVoice(c.cfg.Voice),
		Instructions: c.cfg.VoiceStyle, ResponseFormat: openai.SpeechResponseFormatOpus,
	})
	if err != nil {
		err = redactProvider(err)
		if cannotSpeak(err) {
			return nil, fmt.Errorf("speak: %w: %w", brain.ErrSpeechUnsupported, err)
		}
		return nil, fmt.Errorf("speak: %w", err)
	}
	defer resp.Close()
	data, err := io.ReadAll(io.LimitReader(resp, maxSpeechBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("speak: read the audio: %w", err)
	case len(data) > maxSpeechBytes:
		return nil, fmt.Errorf("speak: the audio is over %d bytes", maxSpeechBytes)
	}
	return data, nil
}

// cannotSpeak reports whether a failed speech request says the endpoint has no speech:
// 404 or 501 (no /audio/speech), or a 4xx naming an unknown or unsupported model.
func cannotSpeak(err error) bool {
	status := httpStatus(err)
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
