package brain

import (
	"context"
	"errors"
	"maps"
	"time"
)

// VoiceMode is when anima answers with a voice note (voice.reply).
type VoiceMode string

// Voice modes.
const (
	// VoiceOff speaks only to those who asked for it (/voice on).
	VoiceOff VoiceMode = "off"
	// VoiceMirror answers a voice note with a voice note.
	VoiceMirror VoiceMode = "mirror"
	// VoiceAlways speaks every reply.
	VoiceAlways VoiceMode = "always"
)

// Valid reports whether m is one of the known modes.
func (m VoiceMode) Valid() bool { return m == VoiceOff || m == VoiceMirror || m == VoiceAlways }

// VoicePref is a person's own choice of voice replies (/voice on|off); the zero value
// follows the mode.
type VoicePref string

// Voice preferences.
const (
	VoiceAuto VoicePref = ""    // the mode decides
	VoiceOn   VoicePref = "on"  // every reply to them is spoken
	VoiceNo   VoicePref = "off" // never spoken
)

// Voice is a reply spoken as a voice note. Its Audio (Ogg/Opus) is kept beside the outbox
// entry as a blob until the note is delivered, never in the entry itself; an entry whose
// audio is gone (a dead letter sent again) goes as text.
type Voice struct {
	Audio    []byte        `json:"-"`
	Duration time.Duration `json:"duration"`
	Bytes    int           `json:"bytes"`
}

// Speaker turns a reply into a voice note for user and charges it to them. Errors:
// ErrSpeechRefused (wrapped) when the reply is not to be spoken (too long, the user's
// daily speech or share spent, the budget spent); ErrSpeechUnsupported (wrapped) when the
// endpoint cannot speak at all; any other error is a failed request.
type Speaker interface {
	Speak(ctx context.Context, user int64, text string) (Voice, error)
}

// Speech errors.
var (
	ErrSpeechRefused     = errors.New("reply not spoken")
	ErrSpeechUnsupported = errors.New("the endpoint cannot speak")
)

// Speaks reports whether a reply to user in rel's chat is spoken, under mode; byVoice
// says the run was woken by the user's voice note. A group gets text unless it turned
// voice on; then, as in a private chat, a person's own choice comes before the mode.
func Speaks(mode VoiceMode, rel Relationship, user int64, byVoice bool) bool {
	if rel.Group && !rel.GroupVoice {
		return false
	}
	switch rel.Voice[user] {
	case VoiceOn:
		return true
	case VoiceNo:
		return false
	}
	return mode == VoiceAlways || mode == VoiceMirror && byVoice
}

// ByVoice reports whether user (0: anyone) sent a voice note among signals.
func ByVoice(signals []Signal, user int64) bool {
	for i := range signals {
		s := &signals[i]
		if s.Type == SignalUserMessage && s.Media != nil && s.Media.Kind == MediaVoice && (user == 0 || s.User == 0 || s.User == user) {
			return true
		}
	}
	return false
}

// SetVoicePref records user's own choice of voice replies in r; the map is replaced, not
// changed, since copies of r share it.
func (r *Relationship) SetVoicePref(user int64, p VoicePref) {
	m := maps.Clone(r.Voice)
	if p == VoiceAuto {
		delete(m, user)
	} else {
		if m == nil {
			m = map[int64]VoicePref{}
		}
		m[user] = p
	}
	if len(m) == 0 {
		m = nil
	}
	r.Voice = m
}

// SetVoice changes voice replies in a chat: User's own choice (Pref), or, with Group, the
// group's switch (On).
type SetVoice struct {
	Chat  int64
	User  int64
	Pref  VoicePref
	Group bool
	On    bool
}

// IntentName implements Intent.
func (SetVoice) IntentName() string { return "set_voice" }
