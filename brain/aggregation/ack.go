package aggregation

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// MaxDefer is the longest a deferral lasts; longer ones are cut to it.
const MaxDefer = 24 * time.Hour

// Override is how far a value must rise over the value at acknowledgement to end a
// non-firm deferral.
const Override = 0.25

// handledTTL is how long a handled ack without Until is kept.
const handledTTL = 24 * time.Hour

// ProactiveKey is the AckRegistry key that gates proactive contact (and follow-ups) with
// chat: "social_pressure:<chat>". brain.Defer intents and /quiet become firm deferrals of
// this key.
func ProactiveKey(chat int64) string { return brain.AckKey(brain.SignalSocialPressure, chat) }

// ackKey is a parsed brain.AckKey, usable as a map key without building a string.
type ackKey struct {
	typ  brain.SignalType
	chat int64
}

// parseKey splits "type:chat" (chat may be negative, as group chat ids are); a key without
// a numeric suffix is agent-wide.
func parseKey(key string) ackKey {
	if i := strings.LastIndexByte(key, ':'); i > 0 {
		if chat, err := strconv.ParseInt(key[i+1:], 10, 64); err == nil && chat != 0 {
			return ackKey{typ: brain.SignalType(key[:i]), chat: chat}
		}
	}
	return ackKey{typ: brain.SignalType(key)}
}

// AckRegistry remembers how signal keys ("type" or "type:chat", see brain.AckKey) are to
// be treated:
//   - handled: the instance acknowledged (a signal at or before Ack.At) is ignored; newer
//     ones are not. Kept until Until, or 24 h after At.
//   - deferred: blocked until Until (at most 24 h after At) unless, for a non-firm
//     deferral, the value has since risen by ≥ 0.25 over Ack.Value; the override ends
//     the deferral. Firm deferrals end only by expiry or ClearChat.
//   - suppressed: blocked until cleared (ClearChat, Clear or a newer ack of the key).
//
// One entry per key: a newer ack replaces the older one. Lookups do not allocate.
// AckRegistry is not safe for concurrent use; it belongs to the core loop's goroutine.
type AckRegistry struct {
	m   map[ackKey]brain.Ack
	now time.Time // latest time seen, to stamp acks without At
}

// NewAckRegistry returns an empty registry.
func NewAckRegistry() *AckRegistry { return &AckRegistry{m: map[ackKey]brain.Ack{}} }

// Ack records a (replacing any ack of the same key). An ack without At is stamped with
// the latest time the registry has seen; a deferral's Until is capped at At + 24 h (a
// deferral without Until lasts 24 h). Acks with an empty key or an unknown kind are
// ignored.
func (r *AckRegistry) Ack(a brain.Ack) {
	if a.Key == "" {
		return
	}
	if a.At.IsZero() {
		a.At = r.now
	}
	switch a.Kind {
	case brain.AckDeferred:
		if limit := a.At.Add(MaxDefer); a.Until.IsZero() || a.Until.After(limit) {
			a.Until = limit
		}
	case brain.AckHandled:
		if a.Until.IsZero() {
			a.Until = a.At.Add(handledTTL)
		}
	case brain.AckSuppressed:
		a.Until = time.Time{}
	default:
		return
	}
	r.m[parseKey(a.Key)] = a
}

// expired reports whether a no longer applies at now.
func expired(a brain.Ack, now time.Time) bool {
	return a.Kind != brain.AckSuppressed && !now.Before(a.Until)
}

// Blocked reports whether a signal of type t for chat (0: agent-wide) with value, about
// an instance at at, is held back at now. An expired ack is dropped; a non-firm deferral
// whose value has risen by ≥ 0.25 is dropped and does not block.
func (r *AckRegistry) Blocked(now time.Time, t brain.SignalType, chat int64, at time.Time, value float64) bool {
	r.tick(now)
	if len(r.m) == 0 {
		return false
	}
	k := ackKey{typ: t, chat: chat}
	a, ok := r.m[k]
	if !ok {
		return false
	}
	if expired(a, now) {
		delete(r.m, k)
		return false
	}
	switch a.Kind {
	case brain.AckHandled:
		return !at.After(a.At)
	case brain.AckDeferred:
		if overridden(a, value) {
			delete(r.m, k)
			return false
		}
	}
	return true
}

// overridden reports whether value has risen far enough over the value of deferral a to
// end it (never for a firm one).
func overridden(a brain.Ack, value float64) bool {
	return !a.Firm && value-a.Value >= Override-1e-9 && !math.IsNaN(value)
}

// ackEnd is when ack a (of ProactiveKey) stops holding back proactive contact after the
// exchange at last, by the rules of Blocked with the pressure after the waking silence
// since last (waking: the user's): zero when it does not hold it back at all, false when only a new exchange or
// ClearChat ends it (suppressed).
func ackEnd(a brain.Ack, last time.Time, waking brain.Waking, minSilence time.Duration) (time.Time, bool) {
	switch a.Kind {
	case brain.AckSuppressed:
		return time.Time{}, false
	case brain.AckHandled:
		if last.After(a.At) {
			return time.Time{}, true
		}
	case brain.AckDeferred:
		if s, ok := overrideSilence(a, minSilence); ok {
			if at, ok := waking.After(last, s); ok && at.Before(a.Until) {
				return at, true
			}
		}
	}
	return a.Until, true
}

// overrideSilence is the least silence whose pressure overrides the deferral a; false
// when none does (a firm deferral, or a value too close to 1). It searches the same
// Pressure curve the decision evaluates, so the two agree to the nanosecond.
func overrideSilence(a brain.Ack, minSilence time.Duration) (time.Duration, bool) {
	const horizon = time.Duration(1 << 62) // ~146 years
	if !overridden(a, brain.Pressure(horizon, minSilence)) {
		return 0, false
	}
	if overridden(a, brain.Pressure(0, minSilence)) {
		return 0, true
	}
	lo, hi := time.Duration(0), horizon // overridden at hi, not at lo
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if overridden(a, brain.Pressure(mid, minSilence)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// Get returns the live ack of key.
func (r *AckRegistry) Get(now time.Time, key string) (brain.Ack, bool) {
	a, ok := r.m[parseKey(key)]
	if !ok || expired(a, now) {
		return brain.Ack{}, false
	}
	return a, true
}

// Clear removes the ack of key.
func (r *AckRegistry) Clear(key string) { delete(r.m, parseKey(key)) }

// ClearChat removes every ack of chat (a user message clears that user's acks).
func (r *AckRegistry) ClearChat(chat int64) {
	if chat == 0 {
		return
	}
	for k := range r.m {
		if k.chat == chat {
			delete(r.m, k)
		}
	}
}

// Prune drops the acks that have expired at now.
func (r *AckRegistry) Prune(now time.Time) {
	r.tick(now)
	for k, a := range r.m {
		if expired(a, now) {
			delete(r.m, k)
		}
	}
}

// Len returns the number of stored acks, expired ones not yet pruned included.
func (r *AckRegistry) Len() int { return len(r.m) }

// Acks returns the live acks at now, sorted by key (for persistence and /status). Feeding
// them back through Ack restores the registry.
func (r *AckRegistry) Acks(now time.Time) []brain.Ack {
	r.Prune(now)
	out := make([]brain.Ack, 0, len(r.m))
	for _, a := range r.m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b brain.Ack) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func (r *AckRegistry) tick(now time.Time) {
	if now.After(r.now) {
		r.now = now
	}
}
