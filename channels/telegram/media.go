package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

var _ brain.MediaFetcher = (*Channel)(nil)

// maxPhotoSide is the longest side of the photo size anima downloads: enough for a vision
// model to see, small enough to stay cheap.
const maxPhotoSide = 1280

// downloadTimeout bounds getFile and the download of one file.
const downloadTimeout = 60 * time.Second

// maxDownloadRedirects is how many redirects on the Bot API's own host a download
// follows; a redirect to any other host is never followed.
const maxDownloadRedirects = 3

// errRedirect is the error of a download redirected off the Bot API's host, or too often.
var errRedirect = errors.New("redirect refused")

// downloadClient is the HTTP client of file downloads: base's transport (so downloads are
// counted), no cookie jar, and checkDownloadRedirect. The download link holds the token,
// so it must not follow a redirect to another host, nor let net/http send the link along
// as the next request's Referer.
func downloadClient(base *http.Client) *http.Client {
	return &http.Client{Transport: base.Transport, CheckRedirect: checkDownloadRedirect}
}

// checkDownloadRedirect follows a redirect only to the first request's scheme and host,
// at most maxDownloadRedirects times, and strips the Referer net/http sets on it.
func checkDownloadRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	switch {
	case req.URL.Scheme != first.Scheme || req.URL.Host != first.Host:
		return fmt.Errorf("to another host: %w", errRedirect)
	case len(via) > maxDownloadRedirects:
		return fmt.Errorf("after %d redirects: %w", maxDownloadRedirects, errRedirect)
	}
	req.Header.Del("Referer")
	return nil
}

// mediaOf describes the file m carries, nil if none anima knows.
func mediaOf(m *models.Message) *brain.Media {
	switch {
	case m.Voice != nil:
		v := m.Voice
		return &brain.Media{Kind: brain.MediaVoice, FileID: v.FileID, Duration: v.Duration, Mime: v.MimeType, Size: v.FileSize}
	case m.VideoNote != nil:
		v := m.VideoNote
		return &brain.Media{Kind: brain.MediaVideoNote, FileID: v.FileID, Duration: v.Duration, Mime: "video/mp4", Size: int64(v.FileSize)}
	case m.Audio != nil:
		a := m.Audio
		return &brain.Media{Kind: brain.MediaAudio, FileID: a.FileID, Duration: a.Duration, Mime: a.MimeType, Size: a.FileSize, Name: a.FileName}
	case len(m.Photo) > 0:
		p, ok := photoSize(m.Photo)
		if !ok {
			return nil
		}
		return &brain.Media{Kind: brain.MediaPhoto, FileID: p.FileID, Mime: "image/jpeg", Size: int64(p.FileSize), Width: p.Width, Height: p.Height}
	case m.Document != nil:
		d := m.Document
		return &brain.Media{Kind: brain.MediaDocument, FileID: d.FileID, Mime: d.MimeType, Size: d.FileSize, Name: d.FileName}
	}
	return nil
}

// photoSize picks the largest size whose long side is at most maxPhotoSide, else the
// smallest size there is.
func photoSize(sizes []models.PhotoSize) (models.PhotoSize, bool) {
	var best, least models.PhotoSize
	found := false
	for _, p := range sizes {
		if p.FileID == "" {
			continue
		}
		side := max(p.Width, p.Height)
		if side <= maxPhotoSide && (best.FileID == "" || side > max(best.Width, best.Height)) {
			best = p
		}
		if least.FileID == "" || side < max(least.Width, least.Height) {
			least = p
		}
		found = true
	}
	if best.FileID != "" {
		return best, true
	}
	return least, found
}

// Fetch downloads the file of m: getFile, then the file from the Bot API's download path.
// That link holds the bot token: it is used here and nowhere else, is sent to no other
// host (a redirect off the Bot API's host is refused) nor as a Referer, and every error
// that could quote it is redacted. A file over brain.MaxMediaBytes is refused with
// brain.ErrMediaTooLarge, before downloading when Telegram states its size.
func (c *Channel) Fetch(ctx context.Context, m brain.Media) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	if m.Size > brain.MaxMediaBytes {
		return nil, "", fmt.Errorf("fetch %s: %d bytes: %w", m.Kind, m.Size, brain.ErrMediaTooLarge)
	}
	f, err := c.bot.GetFile(ctx, &bot.GetFileParams{FileID: m.FileID})
	if err != nil {
		return nil, "", fmt.Errorf("get file: %w", c.redact(err))
	}
	if f.FileSize > brain.MaxMediaBytes {
		return nil, "", fmt.Errorf("fetch %s: %d bytes: %w", m.Kind, f.FileSize, brain.ErrMediaTooLarge)
	}
	if f.FilePath == "" {
		return nil, "", errors.New("get file: no file path in the answer")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.bot.FileDownloadLink(f), nil)
	if err != nil {
		return nil, "", fmt.Errorf("download request: %w", c.redact(err))
	}
	resp, err := c.download.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("download: %w", c.redact(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, "", fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, brain.MaxMediaBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("download: %w", c.redact(err))
	}
	if len(data) > brain.MaxMediaBytes {
		return nil, "", fmt.Errorf("fetch %s: %w", m.Kind, brain.ErrMediaTooLarge)
	}
	mime := m.Mime
	if mime == "" {
		mime = byExtension(path.Ext(f.FilePath))
	}
	if mime == "" {
		mime = http.DetectContentType(data)
	}
	c.log.Debug("file downloaded", "media_kind", m.Kind, "bytes", len(data))
	return data, mime, nil
}

// byExtension is the mime type of the file extensions Telegram's file paths carry.
func byExtension(ext string) string {
	switch ext {
	case ".oga", ".ogg":
		return "audio/ogg"
	case ".mp3":
		return "audio/mpeg"
	case ".m4a":
		return "audio/mp4"
	case ".mp4":
		return "video/mp4"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".png":
		return "image/png"
	case ".webp":
		return "image/webp"
	}
	return ""
}
