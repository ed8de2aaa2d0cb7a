package telegramtest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// The media builders and getFile's answer are what the Bot API spec says they are.
func TestMediaBuildersMatchTheSpec(t *testing.T) {
	t.Parallel()
	s := telegramtest.New(t)
	voice := s.VoiceMessage(1, 1, []byte("hi"), 3)
	photo := s.PhotoMessage(1, 1, "c", telegramtest.Image{Width: 2, Height: 1, Data: []byte("p")})
	doc := s.DocumentMessage(1, 1, "a.txt", "text/plain", []byte("x"), "")
	for name, v := range map[string]any{"Voice": voice.Voice, "PhotoSize": photo.Photo[0], "Document": doc.Document,
		"File": models.File{FileID: "f", FileUniqueID: "u", FilePath: "voice/file_0.oga"}} {
		bad, err := telegramtest.CheckType(name, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	}
	if bad, _ := telegramtest.CheckType("Voice", map[string]any{"file_id": "x", "colour": 1}); len(bad) != 3 {
		t.Errorf("CheckType missed problems: %v", bad)
	}
}

// The download path carries the token, as Telegram's does: a wrong one is refused.
func TestFileDownloadPath(t *testing.T) {
	t.Parallel()
	s := telegramtest.New(t)
	id := s.AddFile("voice", ".oga", []byte("audio"))
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get(s.URL + "/bot" + s.Token + "/getFile?file_id=" + id)
	if code != http.StatusOK {
		t.Fatalf("getFile = %d %s", code, body)
	}
	if code, body := get(s.URL + "/file/bot" + s.Token + "/voice/file_0.oga"); code != http.StatusOK || body != "audio" {
		t.Errorf("download = %d %q", code, body)
	}
	if code, _ := get(s.URL + "/file/botWRONG/voice/file_0.oga"); code != http.StatusUnauthorized {
		t.Errorf("download with a wrong token = %d, want 401", code)
	}
	if code, _ := get(s.URL + "/bot" + s.Token + "/getFile?file_id=nope"); code != http.StatusBadRequest {
		t.Errorf("getFile of an unknown id = %d, want 400", code)
	}
}
