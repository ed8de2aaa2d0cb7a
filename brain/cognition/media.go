package cognition

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/prompt"
	"github.com/anima-bot/anima/brain/provider"
)

var _ brain.Perceiver = (*Cognition)(nil)

// MaxDocumentBytes is the largest text file anima reads.
const MaxDocumentBytes = 256 << 10

// audioTokensPerSecond converts transcribed audio into tokens for the daily budget's
// bookkeeping when the provider reports none (go-openai's transcription answer carries no
// usage): about what OpenAI's audio models bill per second of input.
const audioTokensPerSecond = 10

// Media outcomes (the outcome label of anima_media_total).
const (
	mediaOK       = "ok"
	mediaRefused  = "refused"  // too large, too long, not a kind anima reads
	mediaDisabled = "disabled" // voice or vision switched off
	mediaFailed   = "failed"   // the download or the transcription failed
	mediaLimited  = "limited"  // the user's daily share or audio is spent
)

// The short answers given instead of reading a file. They are system messages: not in
// history, not the model's words.
const (
	noticeCannotListen = "I can't listen to voice notes yet — could you type it for me?"
	noticeCannotSee    = "I can't see images yet — could you tell me what's in it?"
	noticeTooLarge     = "That file is over the 20 MB I can download — could you send a smaller one?"
	noticeTooLong      = "That recording is longer than I can listen to (%s at most) — could you send a shorter one, or type the gist?"
	noticeAudioSpent   = "I've listened to all the voice I can for one day (%s) — could you type it for me? I'll be all ears again tomorrow."
	noticeNotHeard     = "I couldn't listen to that just now — could you send it again?"
	noticeNotFetched   = "I couldn't open that just now — could you send it again?"
	noticeCannotRead   = "I can read text files (.txt, .md, .csv, .json) up to 256 KB; I can't open this one."
	noticeDocTooLarge  = "That file is too big for me: I can read text files (.txt, .md, .csv, .json) up to 256 KB."
)

// Perceive makes the media of w's user messages readable, in the chat's run: a voice
// note, audio or video note is downloaded and transcribed into the message's text
// ("[voice 0:42] …"); a photo's bytes and a text file's contents are attached for this
// run's prompt only (the text keeps the caption and a note: "[photo] …", "[file a.md] …");
// whatever cannot be read gets a short Media.Notice and a note in the text, so it is
// recorded all the same. It never fails: problems become notices. f nil: nothing can be
// downloaded. Nothing is downloaded for a user whose token share is spent (the note says
// so; Think gives the share's notice) nor a recording past their daily audio.
func (c *Cognition) Perceive(ctx context.Context, w brain.Wake, f brain.MediaFetcher) brain.Wake {
	sigs := slices.Clone(w.Signals)
	for i := range sigs {
		s := &sigs[i]
		if s.Type != brain.SignalUserMessage || s.Media == nil {
			continue
		}
		m := *s.Media // the wake's own signals stay as they were
		caption := strings.TrimSpace(s.Text)
		user := s.User
		if user == 0 {
			user = w.User
		}
		var (
			note, outcome string
			err           error
		)
		switch {
		case c.budget.usedUp(user):
			// No notice of its own: Think answers for the spent share, as for a text.
			note, outcome = unperceivedNote(m), mediaLimited
		case m.Kind.Listened():
			note, outcome, err = c.listen(ctx, &m, f, user)
		case m.Kind == brain.MediaPhoto:
			note, outcome, err = c.see(ctx, &m, f)
		default:
			note, outcome, err = c.read(ctx, &m, f)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			c.log.Warn("media not perceived", "chat", w.Chat, "media_kind", m.Kind, "outcome", outcome, "err", err)
		case outcome == mediaLimited:
			c.log.Info("media not perceived: the user's daily share or audio is spent", "chat", w.Chat, "media_kind", m.Kind)
		}
		c.m.media.WithLabelValues(string(m.Kind), outcome).Inc()
		s.Text = strings.TrimSpace(note + " " + caption)
		if m.Kind.Listened() && outcome == mediaOK && caption != "" {
			s.Text = note + "\n" + caption // a transcript, then the audio's caption
		}
		s.Media = &m
	}
	w.Signals = sigs
	return w
}

// listen transcribes a voice note, audio or video note of user's; note is the message's
// text without its caption: "[voice 0:42] the words", or "[voice 0:42, not heard]". A
// recording past the user's daily audio is not downloaded.
func (c *Cognition) listen(ctx context.Context, m *brain.Media, f brain.MediaFetcher, user int64) (note, outcome string, err error) {
	switch {
	case c.cfg.TranscriptionModel == "":
		return refuse(m, noticeCannotListen, mediaDisabled, nil)
	case time.Duration(m.Duration)*time.Second > c.cfg.MaxAudio:
		return refuse(m, fmt.Sprintf(noticeTooLong, prompt.Human(c.cfg.MaxAudio)), mediaRefused, nil)
	case m.Size > brain.MaxMediaBytes:
		return refuse(m, noticeTooLarge, mediaRefused, nil)
	case !c.budget.audioAllowed(user, m.Duration):
		c.refused.Refused(brain.LimitUserAudio)
		return refuse(m, fmt.Sprintf(noticeAudioSpent, prompt.Human(c.cfg.DailyUserAudio)), mediaLimited, nil)
	}
	data, mime, err := fetch(ctx, f, *m)
	switch {
	case errors.Is(err, brain.ErrMediaTooLarge):
		return refuse(m, noticeTooLarge, mediaRefused, nil)
	case err != nil:
		return refuse(m, noticeNotHeard, mediaFailed, err)
	}
	text, err := c.transcribe(ctx, data, audioName(m.Kind, mime), m.Duration, user)
	if err != nil {
		return refuse(m, noticeNotHeard, mediaFailed, err)
	}
	if text == "" {
		text = "(no words)"
	}
	return listenLabel(*m) + "] " + text, mediaOK, nil
}

// listenLabel is the start of a recording's note: "[voice 0:42".
func listenLabel(m brain.Media) string {
	return "[" + strings.ReplaceAll(string(m.Kind), "_", " ") + " " + clock(m.Duration)
}

// unperceivedNote is the note of a file that was not perceived: "[voice 0:42, not
// heard]", "[photo, not seen]", "[file a.md, not read]".
func unperceivedNote(m brain.Media) string {
	switch {
	case m.Kind.Listened():
		return listenLabel(m) + ", not heard]"
	case m.Kind == brain.MediaPhoto:
		return "[photo, not seen]"
	}
	return "[file " + fileName(m) + ", not read]"
}

// fileName is a document's name fit for its note.
func fileName(m brain.Media) string {
	if name := brain.CleanName(m.Name); name != "" {
		return name
	}
	return "unnamed"
}

// transcribe sends audio to the endpoint's /audio/transcriptions. The request counts in
// anima_llm_requests_total and, by its audio seconds, in the daily token budget and in
// user's share and daily audio.
func (c *Cognition) transcribe(ctx context.Context, audio []byte, name string, seconds int, user int64) (string, error) {
	model := c.cfg.TranscriptionModel
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	began := time.Now()
	resp, err := c.client.CreateTranscription(rctx, openai.AudioRequest{
		Model: model, FilePath: name, Reader: bytes.NewReader(audio),
	})
	took := time.Since(began).Seconds()
	c.m.duration.WithLabelValues(model).Observe(took)
	if err != nil {
		class, _ := provider.Classify(err)
		c.m.requests.WithLabelValues(model, class).Inc()
		return "", fmt.Errorf("transcribe %s: %w", name, redactProvider(err)) // logged by Perceive
	}
	c.m.requests.WithLabelValues(model, outcomeOK).Inc()
	c.m.transcription.Observe(took)
	c.m.transcribed.Add(float64(seconds))
	tokens := max(1, seconds) * audioTokensPerSecond
	c.budget.add(tokens)
	c.budget.chargeAudio(user, seconds, tokens)
	return strings.TrimSpace(resp.Text), nil
}

// see downloads a photo for the model to look at in this run.
func (c *Cognition) see(ctx context.Context, m *brain.Media, f brain.MediaFetcher) (note, outcome string, err error) {
	if !c.cfg.Vision {
		return refuse(m, noticeCannotSee, mediaDisabled, nil)
	}
	data, mime, err := fetch(ctx, f, *m)
	switch {
	case errors.Is(err, brain.ErrMediaTooLarge):
		return refuse(m, noticeTooLarge, mediaRefused, nil)
	case err != nil:
		return refuse(m, noticeNotFetched, mediaFailed, err)
	}
	if !strings.HasPrefix(mime, "image/") {
		mime = "image/jpeg" // Telegram re-encodes every photo as JPEG
	}
	m.Content, m.Mime = data, mime
	return "[photo]", mediaOK, nil
}

// read downloads a text file for the model to read in this run; other files get a short
// answer saying what anima can read.
func (c *Cognition) read(ctx context.Context, m *brain.Media, f brain.MediaFetcher) (note, outcome string, err error) {
	switch {
	case !textLike(m.Mime, m.Name):
		return refuse(m, noticeCannotRead, mediaRefused, nil)
	case m.Size > MaxDocumentBytes:
		return refuse(m, noticeDocTooLarge, mediaRefused, nil)
	}
	data, _, err := fetch(ctx, f, *m)
	switch {
	case errors.Is(err, brain.ErrMediaTooLarge) || err == nil && len(data) > MaxDocumentBytes:
		return refuse(m, noticeDocTooLarge, mediaRefused, nil)
	case err != nil:
		return refuse(m, noticeNotFetched, mediaFailed, err)
	case !utf8.Valid(data):
		return refuse(m, noticeCannotRead, mediaRefused, nil)
	}
	m.Content = data
	return "[file " + fileName(*m) + "]", mediaOK, nil
}

// refuse leaves m unperceived with the notice the user is told; it returns m's note, the
// outcome and err, as listen, see and read do.
func refuse(m *brain.Media, notice, outcome string, err error) (string, string, error) {
	m.Notice = notice
	return unperceivedNote(*m), outcome, err
}

// fetch downloads m through f; a nil f fails.
func fetch(ctx context.Context, f brain.MediaFetcher, m brain.Media) ([]byte, string, error) {
	if f == nil {
		return nil, "", errors.New("no way to download files on this channel")
	}
	data, mime, err := f.Fetch(ctx, m)
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: %w", m.Kind, err)
	}
	return data, mime, nil
}

// textLike reports whether a document is a text file anima reads: text/*, JSON, or a
// .md, .txt, .csv or .json name.
func textLike(mime, name string) bool {
	mime = strings.ToLower(strings.TrimSpace(mime))
	if strings.HasPrefix(mime, "text/") || mime == "application/json" {
		return true
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".txt", ".csv", ".json":
		return true
	}
	return false
}

// audioName is the file name the transcription request carries: the endpoint tells the
// format by its extension (Telegram's voice notes are .oga, which OpenAI does not accept
// by that name).
func audioName(kind brain.MediaKind, mime string) string {
	ext := ".ogg"
	switch mime {
	case "audio/mpeg", "audio/mp3":
		ext = ".mp3"
	case "audio/mp4", "audio/x-m4a", "audio/m4a", "audio/aac":
		ext = ".m4a"
	case "video/mp4":
		ext = ".mp4"
	case "audio/wav", "audio/x-wav", "audio/wave":
		ext = ".wav"
	case "audio/webm", "video/webm":
		ext = ".webm"
	case "audio/flac", "audio/x-flac":
		ext = ".flac"
	case "audio/ogg", "audio/opus":
		ext = ".ogg"
	default:
		if kind == brain.MediaVideoNote {
			ext = ".mp4"
		}
	}
	return string(kind) + ext
}

// clock renders seconds as m:ss (h:mm:ss from an hour).
func clock(seconds int) string {
	seconds = max(seconds, 0)
	h, m, s := seconds/3600, seconds/60%60, seconds%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
