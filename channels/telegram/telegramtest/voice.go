package telegramtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain/ogg"
)

// MaxCaptionLength is Telegram's limit on a caption, in UTF-16 code units after entity
// parsing.
const MaxCaptionLength = 1024

// Upload is a file a request sent as multipart/form-data.
type Upload struct {
	Name string // the part's file name
	Data []byte
}

// readUpload reads a multipart file.
func readUpload(fh *multipart.FileHeader) (Upload, error) {
	f, err := fh.Open()
	if err != nil {
		return Upload{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	return Upload{Name: fh.Filename, Data: data}, err
}

type uploadsKey struct{}

// withUploads hands a request's files to its method's handler.
func withUploads(ctx context.Context, files map[string]Upload) context.Context {
	if len(files) == 0 {
		return ctx
	}
	return context.WithValue(ctx, uploadsKey{}, files)
}

// upload is the file a parameter refers to ("attach://<name>").
func upload(ctx context.Context, ref string) (Upload, bool) {
	name, ok := strings.CutPrefix(ref, "attach://")
	if !ok {
		return Upload{}, false
	}
	files, _ := ctx.Value(uploadsKey{}).(map[string]Upload)
	up, ok := files[name]
	return up, ok
}

// Voice is a voice note the bot sent with sendVoice.
type Voice struct {
	ID          int
	ChatID      int64
	Audio       []byte        // the uploaded Ogg/Opus file
	FileName    string        // its multipart file name
	Duration    int           // the duration parameter, in seconds (0 when absent)
	Length      time.Duration // the recording's own length, from its Ogg pages
	Caption     string        // as sent (with HTML tags for parse_mode HTML)
	Visible     string        // the caption as the user sees it
	ParseMode   string
	ReplyTo     int
	ReplyMarkup json.RawMessage
	At          time.Time
}

// sendVoice checks a voice note as Telegram does for one to play as such: an uploaded
// Ogg/Opus file (a file_id or URL the fake cannot fetch is refused), an integer duration,
// a caption of at most 1024 UTF-16 units after entity parsing; then records it.
func (s *Server) sendVoice(ctx context.Context, p map[string]string, at time.Time) (any, *apiError) {
	chat, aerr := chatID(p)
	if aerr != nil {
		return nil, aerr
	}
	up, ok := upload(ctx, p["voice"])
	if !ok {
		return nil, badRequest("wrong remote file identifier specified: this fake takes only an uploaded voice")
	}
	length, err := ogg.Duration(up.Data)
	if err != nil {
		if errors.Is(err, ogg.ErrNotOpus) {
			return nil, badRequest("VOICE_INVALID: %s", err.Error())
		}
		return nil, badRequest("%s", err.Error())
	}
	v := Voice{ChatID: chat, Audio: up.Data, FileName: up.Name, Length: length, At: at}
	if d := p["duration"]; d != "" {
		if v.Duration, err = strconv.Atoi(d); err != nil || v.Duration < 0 {
			return nil, badRequest("field \"duration\" must be a non-negative integer")
		}
	}
	if v.Caption, v.ParseMode = p["caption"], p["parse_mode"]; v.Caption != "" {
		v.Visible = v.Caption
		if strings.EqualFold(v.ParseMode, "HTML") {
			vis, err := ParseHTML(v.Caption)
			if err != nil {
				return nil, badRequest("can't parse entities: %s", err.Error())
			}
			v.Visible = vis
		}
		if UTF16Len(v.Visible) > MaxCaptionLength {
			return nil, badRequest("message caption is too long")
		}
	}
	if v.ReplyMarkup, v.ReplyTo, aerr = replyFields(p); aerr != nil {
		return nil, aerr
	}
	s.keep(func(id int) { v.ID = id; s.voices = append(s.voices, v) })
	out := s.sentMessage(chat, v.ID)
	out.Caption = v.Visible
	out.Voice = &models.Voice{FileID: "voice-" + strconv.Itoa(v.ID), FileUniqueID: "v" + strconv.Itoa(v.ID), Duration: v.Duration, MimeType: "audio/ogg", FileSize: int64(len(v.Audio))}
	return out, nil
}

// Voices returns the voice notes sent successfully, in the order received.
func (s *Server) Voices() []Voice { return snapshot(s, &s.voices) }

// VoicesTo returns the voice notes sent to chat.
func (s *Server) VoicesTo(chat int64) []Voice {
	return slices.DeleteFunc(s.Voices(), func(v Voice) bool { return v.ChatID != chat })
}
