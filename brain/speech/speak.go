package speech

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/ogg"
	"github.com/anima-bot/anima/brain/provider"
)

// charsPerSecond is how fast a voice reads, to tell a reply's length before it is
// spoken: about 150 words a minute.
const charsPerSecond = 15

// tokensPerChar charges speech to the daily budget and the user's share: a token per
// character spoken (OpenAI bills its speech models by the input's characters or tokens
// and the audio's length; a character is between the two).
const tokensPerChar = 1

// offAfter consecutive answers saying the endpoint cannot speak (404, an unknown model,
// an answer that is not Ogg/Opus) turn speech off for the process: one could be a proxy's
// error page, three in a row with nothing else between are the endpoint.
const offAfter = 3

// The speech breaker: breakerThreshold consecutive failed speech requests (timeout, 429,
// 5xx, a transport error, an answer cut or too long) open it, and replies then go as text
// at once; one reply may probe every probeGap, and its success closes it. The gap is
// longer than the model's: a probe of a stalled endpoint holds its reply for the speech
// timeout, and a reply held back is a cost text does not have.
const (
	breakerThreshold = 3
	probeGap         = 30 * time.Second
)

// Speech outcomes (the outcome label of anima_speech_requests_total).
const (
	outcomeOK          = "ok"
	outcomeTooLong     = "too_long"    // refused: longer than MaxLength
	outcomeLimited     = "limited"     // refused: the user's speech, share or the budget spent
	outcomeFailed      = "failed"      // the request failed (4xx, 5xx, timeout, a body cut or too long)
	outcomeUnsupported = "unsupported" // the answer says the endpoint cannot speak (offAfter in a row: off)
	outcomeUnavailable = "unavailable" // not sent: the speech breaker is open
)

// errUnavailable is Speak's error while the speech breaker is open. It wraps
// brain.ErrSpeechUnsupported: for now the endpoint cannot speak, and the reply goes as
// text without a warning each time (the breaker's opening was logged).
var errUnavailable = fmt.Errorf("%w: the speech endpoint is failing (speech breaker open)", brain.ErrSpeechUnsupported)

// errNotOgg marks an answer that is not Ogg/Opus.
var errNotOgg = errors.New("the answer is not Ogg/Opus")

// Speak implements brain.Speaker: text, made sayable (Markdown and links left out), is
// spoken by the speech model on the endpoint's /audio/speech as Ogg/Opus, and charged to
// user — its characters to the daily budget and their share (the Meter), its length to
// their daily speech. A reply estimated past MaxLength, or for a user whose speech or
// share is spent (or when the budget is), is refused (brain.ErrSpeechRefused) before any
// request.
//
// The request, the audio read with it, is bounded by Timeout, and the audio by readCap of
// the reply's length: past it the read stops. Failed requests count on the speech
// breaker; while it is open, Speak fails at once (brain.ErrSpeechUnsupported, wrapped) but
// for a probe every probeGap. offAfter answers in a row that say the endpoint cannot speak
// (404, an unknown model, an answer that is not Ogg/Opus) turn speech off for the process
// (brain.ErrSpeechUnsupported); a single one fails only its reply. Every failure leaves
// the reply to go as text.
func (s *Speech) Speak(ctx context.Context, user int64, text string) (brain.Voice, error) {
	if s.off.Load() {
		return brain.Voice{}, brain.ErrSpeechUnsupported
	}
	said := Sayable(text)
	chars := utf8.RuneCountInString(said)
	est := time.Duration(chars) * time.Second / charsPerSecond
	switch {
	case chars == 0:
		return brain.Voice{}, fmt.Errorf("%w: nothing to say", brain.ErrSpeechRefused)
	case est > s.cfg.MaxLength:
		s.m.requests.WithLabelValues(outcomeTooLong).Inc()
		return brain.Voice{}, fmt.Errorf("%w: about %s of speech, over %s", brain.ErrSpeechRefused, est.Round(time.Second), s.cfg.MaxLength)
	case !s.meter.TokensAllowed(user):
		s.m.requests.WithLabelValues(outcomeLimited).Inc()
		return brain.Voice{}, fmt.Errorf("%w: the daily budget or the user's share is spent", brain.ErrSpeechRefused)
	case !s.daily.allowed(user, est):
		s.m.requests.WithLabelValues(outcomeLimited).Inc()
		s.refused.Refused(brain.LimitUserSpeech)
		return brain.Voice{}, fmt.Errorf("%w: the user's daily speech (%s) is spent", brain.ErrSpeechRefused, s.cfg.DailyUserSpeech)
	}
	if !s.brk.Allow(s.clock.Now(), true) {
		s.m.requests.WithLabelValues(outcomeUnavailable).Inc()
		return brain.Voice{}, errUnavailable
	}
	began := time.Now()
	data, err := s.synthesize(ctx, said, readCap(est))
	s.m.duration.Observe(time.Since(began).Seconds())
	var d time.Duration
	if err == nil {
		if d, err = ogg.Duration(data); err != nil {
			err = fmt.Errorf("speak: %w (%d bytes): %w", errNotOgg, len(data), err)
		}
	}
	if err != nil {
		return brain.Voice{}, s.failed(ctx, err)
	}
	s.brk.Success()
	s.bad.Store(0)
	s.m.requests.WithLabelValues(outcomeOK).Inc()
	s.m.chars.Add(float64(chars))
	s.m.audio.Add(d.Seconds())
	s.m.bytes.Add(float64(len(data)))
	s.meter.ChargeTokens(user, chars*tokensPerChar)
	s.daily.charge(user, d)
	return brain.Voice{Audio: data, Duration: d, Bytes: len(data)}, nil
}

// failed books a failed speech request on the breaker and the run of answers saying the
// endpoint cannot speak, and returns its error: brain.ErrSpeechUnsupported (wrapped) once
// that run reaches offAfter and speech is off.
func (s *Speech) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil { // the caller gave up: no verdict on the endpoint
		s.brk.Release()
		s.m.requests.WithLabelValues(outcomeFailed).Inc()
		return err
	}
	notOgg := errors.Is(err, errNotOgg)
	cannot := notOgg || cannotSpeak(err)
	if _, retryable := provider.Classify(err); notOgg || retryable && !cannot {
		// An answer that is not audio is a failure too: most often a proxy's error page.
		s.brk.Failure(s.clock.Now())
	} else {
		s.brk.Success() // the endpoint answered; the request was wrong
	}
	if !cannot {
		s.bad.Store(0)
		s.m.requests.WithLabelValues(outcomeFailed).Inc()
		return err
	}
	s.m.requests.WithLabelValues(outcomeUnsupported).Inc()
	if n := s.bad.Add(1); n < offAfter {
		s.log.Warn("the endpoint's answer says it cannot speak; this reply goes as text", "model", s.cfg.Model, "in_a_row", n, "err", err)
		return err
	}
	if s.off.CompareAndSwap(false, true) {
		s.m.off.Set(1)
		s.log.Warn("the endpoint cannot speak; replies go as text until restart", "model", s.cfg.Model, "in_a_row", offAfter, "err", err)
	}
	return fmt.Errorf("%w: %w", brain.ErrSpeechUnsupported, err)
}
