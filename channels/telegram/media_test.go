package telegram

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

func TestClassifyMedia(t *testing.T) {
	t.Parallel()
	srv := telegramtest.New(t)
	c := classifier{allowed: map[int64]bool{alice: true}}
	voice := srv.VoiceMessage(alice, alice, []byte("hi"), 7)
	photo := srv.PhotoMessage(alice, alice, "sunset",
		telegramtest.Image{Width: 90, Height: 67, Data: []byte("a")},
		telegramtest.Image{Width: 1280, Height: 720, Data: []byte("bb")},
		telegramtest.Image{Width: 1920, Height: 1080, Data: []byte("ccc")})
	huge := srv.PhotoMessage(alice, alice, "", telegramtest.Image{Width: 4000, Height: 3000, Data: []byte("d")},
		telegramtest.Image{Width: 2000, Height: 1500, Data: []byte("e")})
	doc := srv.DocumentMessage(alice, alice, "list.md", "text/markdown", []byte("# list"), "")
	cmdCaption := srv.DocumentMessage(alice, alice, "x.txt", "text/plain", []byte("x"), "/help")
	note := telegramtest.TextMessage(alice, alice, models.ChatTypePrivate, "")
	note.VideoNote = &models.VideoNote{FileID: "vn", FileUniqueID: "u", Length: 240, Duration: 12, FileSize: 900}
	cases := []struct {
		name  string
		msg   models.Message
		text  string
		media *brain.Media
		typ   brain.SignalType
	}{
		{"voice", voice, "", &brain.Media{Kind: brain.MediaVoice, FileID: voice.Voice.FileID, Duration: 7, Mime: "audio/ogg", Size: 2}, brain.SignalUserMessage},
		{"photo: the largest size within 1280 px", photo, "sunset", &brain.Media{Kind: brain.MediaPhoto, FileID: photo.Photo[1].FileID, Mime: "image/jpeg", Size: 2, Width: 1280, Height: 720}, brain.SignalUserMessage},
		{"photo: only big sizes, the smallest", huge, "", &brain.Media{Kind: brain.MediaPhoto, FileID: huge.Photo[1].FileID, Mime: "image/jpeg", Size: 1, Width: 2000, Height: 1500}, brain.SignalUserMessage},
		{"document", doc, "", &brain.Media{Kind: brain.MediaDocument, FileID: doc.Document.FileID, Mime: "text/markdown", Size: 6, Name: "list.md"}, brain.SignalUserMessage},
		{"video note", note, "", &brain.Media{Kind: brain.MediaVideoNote, FileID: "vn", Duration: 12, Mime: "video/mp4", Size: 900}, brain.SignalUserMessage},
		{"a command in a caption stays a command", cmdCaption, "/help", nil, brain.SignalCommand},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.msg
			m.ID, m.Date = 9, 1
			v := c.classify(&models.Update{ID: 3, Message: &m}, time.Now())
			if !v.ok {
				t.Fatalf("not recorded: %s", v.why)
			}
			if v.sig.Type != tc.typ || v.sig.Text != tc.text {
				t.Errorf("signal %s %q, want %s %q", v.sig.Type, v.sig.Text, tc.typ, tc.text)
			}
			if diff := cmp.Diff(tc.media, v.sig.Media); diff != "" {
				t.Errorf("media (-want +got):\n%s", diff)
			}
		})
	}
}

// Fetch downloads through getFile and the token-bearing file path, and no error it
// returns shows the token.
func TestFetch(t *testing.T) {
	t.Parallel()
	const token = "7012345678:AAHk3_fake-Token_for-tests-0123456789abc"
	h := newHarness(t, 0, func(c *Config, _ *Options) { c.Token = token })
	h.srv.Token = token
	ctx := context.Background()

	id := h.srv.AddFile("voice", ".oga", []byte("OggS voice"))
	data, mime, err := h.ch.Fetch(ctx, brain.Media{Kind: brain.MediaVoice, FileID: id})
	if err != nil || string(data) != "OggS voice" || mime != "audio/ogg" {
		t.Fatalf("Fetch = %q, %q, %v", data, mime, err)
	}
	if d := h.srv.Downloads(); len(d) != 1 || d[0].Status != http.StatusOK || !strings.HasPrefix(d[0].Path, "voice/") {
		t.Errorf("downloads = %+v", d)
	}

	big := h.srv.AddLargeFile("documents", ".txt", 21<<20)
	if _, _, err := h.ch.Fetch(ctx, brain.Media{Kind: brain.MediaDocument, FileID: big, Size: 21 << 20}); !errors.Is(err, brain.ErrMediaTooLarge) {
		t.Errorf("a 21 MB file: err = %v, want ErrMediaTooLarge", err)
	}

	// A proxy's error page that quotes the download link, and a failed getFile.
	h.srv.InjectFault("getFile", telegramtest.Fault{Code: http.StatusBadGateway,
		RawBody: "could not retrieve " + h.srv.URL + "/file/bot" + token + "/voice/file_0.oga"})
	_, _, err1 := h.ch.Fetch(ctx, brain.Media{Kind: brain.MediaVoice, FileID: id})
	_, _, err2 := h.ch.Fetch(ctx, brain.Media{Kind: brain.MediaVoice, FileID: "unknown"})
	for _, err := range []error{err1, err2} {
		if err == nil {
			t.Fatal("Fetch succeeded on a failing Bot API")
		}
		if secret := token[strings.IndexByte(token, ':')+1:]; strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

// A download that redirects to another host is not followed, so the token-bearing link
// never reaches it, not even as a Referer; a redirect on the same host is followed a few
// hops at most, without a Referer; no error shows the token.
func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	const token = "7012345678:AAHk3_fake-Token_for-tests-0123456789abc"
	secret := token[strings.IndexByte(token, ':')+1:]
	h := newHarness(t, 0, func(c *Config, _ *Options) { c.Token = token })
	h.srv.Token = token
	ctx := testCtx(t)

	var (
		mu   sync.Mutex
		seen []http.Header
	)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		_, _ = w.Write([]byte("OggS elsewhere"))
	}))
	t.Cleanup(elsewhere.Close)

	away := h.srv.AddFile("voice", ".oga", []byte("OggS away"))
	h.srv.RedirectFile(away, elsewhere.URL+"/voice.oga")
	_, _, errAway := h.ch.Fetch(ctx, brain.Media{Kind: brain.MediaVoice, FileID: away})
	if !errors.Is(errAway, errRedirect) {
		t.Errorf("a redirect to another host: err = %v, want errRedirect", errAway)
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the other host got %d requests, headers %v", len(seen), seen)
	}
	mu.Unlock()

	target := h.srv.AddFile("voice", ".oga", []byte("OggS moved"))
	moved := h.srv.AddFile("voice", ".oga", []byte("OggS stale"))
	h.srv.RedirectFile(moved, h.srv.FileURL(target))
	data, _, err := h.ch.Fetch(ctx, brain.Media{Kind: brain.MediaVoice, FileID: moved})
	if err != nil || string(data) != "OggS moved" {
		t.Errorf("same-host redirect: Fetch = %q, %v; want the moved file", data, err)
	}
	for _, d := range h.srv.Downloads() {
		if d.Referer != "" {
			t.Errorf("download of %s sent Referer %q", d.Path, d.Referer)
		}
	}

	loop := h.srv.AddFile("voice", ".oga", []byte("OggS loop"))
	h.srv.RedirectFile(loop, h.srv.FileURL(loop))
	before := len(h.srv.Downloads())
	_, _, errLoop := h.ch.Fetch(ctx, brain.Media{Kind: brain.MediaVoice, FileID: loop})
	if !errors.Is(errLoop, errRedirect) {
		t.Errorf("a redirect loop: err = %v, want errRedirect", errLoop)
	}
	if n := len(h.srv.Downloads()) - before; n > 1+maxDownloadRedirects {
		t.Errorf("a redirect loop made %d requests, want at most %d", n, 1+maxDownloadRedirects)
	}
	for _, err := range []error{errAway, errLoop} {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}
