package brain

import (
	"context"
	"errors"
)

// MediaKind names the kind of file a user message carries.
type MediaKind string

// Media kinds.
const (
	MediaVoice     MediaKind = "voice"      // a voice note
	MediaAudio     MediaKind = "audio"      // an audio file (music, a recording)
	MediaVideoNote MediaKind = "video_note" // a round video message
	MediaPhoto     MediaKind = "photo"
	MediaDocument  MediaKind = "document" // any other file
)

// Listened reports whether the kind is heard (transcribed) rather than seen or read.
func (k MediaKind) Listened() bool {
	return k == MediaVoice || k == MediaAudio || k == MediaVideoNote
}

// MaxMediaBytes is the largest file a bot may download (Telegram's limit for bots).
const MaxMediaBytes = 20 << 20

// Media describes the file of a user message as the platform holds it: what is stored
// with the signal is its reference and metadata, never its bytes.
type Media struct {
	Kind   MediaKind `json:"kind"`
	FileID string    `json:"file_id"`
	// Duration is the length of a voice note, audio or video note, in seconds.
	Duration int    `json:"duration,omitempty"`
	Mime     string `json:"mime,omitempty"`
	Size     int64  `json:"size,omitempty"` // bytes; 0 when the platform did not say
	Name     string `json:"name,omitempty"` // a document's or audio's file name
	Width    int    `json:"width,omitempty"`
	Height   int    `json:"height,omitempty"`

	// Content is what perception made of the file for the run it arrived in — an image's
	// bytes, a document's text — and Notice the short answer given instead when it could
	// not be read. Neither is ever stored: the next run sees only the signal's Text.
	Content []byte `json:"-"`
	Notice  string `json:"-"`
}

// ErrMediaTooLarge is returned (wrapped) by a MediaFetcher for a file over MaxMediaBytes.
var ErrMediaTooLarge = errors.New("file is too large to download")

// MediaFetcher downloads the file of a signal's Media. Implemented by a channel; the
// download link (which may hold credentials) never leaves it. Errors: ErrMediaTooLarge
// (wrapped) for a file over MaxMediaBytes; any other error is a failed download.
type MediaFetcher interface {
	Fetch(ctx context.Context, m Media) (data []byte, mime string, err error)
}

// Perceiver makes the media of a wake's user messages readable before cognition thinks
// about it: voice transcribed into the signal's Text (marked as voice), images and
// documents attached as Media.Content, and what cannot be read given a Media.Notice. It
// returns a new wake and leaves w's signals untouched. Implemented by a Thinker that can
// perceive; f may be nil (nothing can be downloaded).
type Perceiver interface {
	Perceive(ctx context.Context, w Wake, f MediaFetcher) Wake
}

// HasMedia reports whether any user message among signals carries a file.
func HasMedia(signals []Signal) bool {
	for i := range signals {
		if signals[i].Media != nil && signals[i].Type == SignalUserMessage {
			return true
		}
	}
	return false
}
