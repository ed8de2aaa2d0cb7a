package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/channelstest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

func FuzzDecodeUpdate(f *testing.F) {
	seeds := []string{
		`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"from":{"id":1001,"first_name":"A"},"text":"hi"}}`,
		`{"update_id":2,"message":{"message_id":2,"date":1,"chat":{"id":-5,"type":"supergroup"},"from":{"id":1001,"first_name":"A"},"text":"@anima_bot 😀 hi","entities":[{"type":"mention","offset":0,"length":10}]}}`,
		`{"update_id":3,"message":{"message_id":2,"date":1,"chat":{"id":-5,"type":"group"},"from":{"id":1001},"text":"x","entities":[{"type":"mention","offset":-3,"length":99}]}}`,
		`{"update_id":4,"callback_query":{"id":"q","from":{"id":1001},"data":"/forget yes","message":{"message_id":9,"date":0,"chat":{"id":1,"type":"private"}}}}`,
		`{"update_id":5,"message_reaction":{"chat":{"id":1,"type":"private"},"message_id":3,"user":{"id":1001},"date":1,"old_reaction":[],"new_reaction":[{"type":"emoji","emoji":"❤"}]}}`,
		`{"update_id":6,"my_chat_member":{"chat":{"id":1,"type":"private"},"from":{"id":1001},"date":1,"old_chat_member":{"status":"member","user":{"id":1}},"new_chat_member":{"status":"kicked","user":{"id":1},"until_date":0}}}`,
		`{"update_id":7,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"from":{"id":1001},"text":"/help@anima_bot@x"}}`,
		`{"update_id":8,"message":"nope"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	cl := classifier{me: identity{id: 123456, username: "anima_bot"}, allowed: map[int64]bool{1001: true}}
	now := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, data []byte) {
		var u models.Update
		if json.Unmarshal(data, &u) != nil {
			return
		}
		v := cl.classify(&u, now)
		if v.kind == "" {
			t.Fatal("verdict without a kind")
		}
		if v.ok {
			if v.sig.Source != "telegram" || v.sig.Ref != strconv.FormatInt(u.ID, 10) || v.sig.User != 1001 {
				t.Fatalf("bad signal %+v", v.sig)
			}
			if strings.Contains(v.sig.Text, "@anima_bot") && v.sig.Type == "command" && strings.HasPrefix(v.sig.Text, "/") {
				first, _, _ := strings.Cut(v.sig.Text, " ")
				if strings.Contains(first, "@") {
					t.Fatalf("command suffix not stripped: %q", v.sig.Text)
				}
			}
		}
	})
}

func TestClassifyCases(t *testing.T) {
	t.Parallel()
	cl := classifier{me: identity{id: 123456, username: "anima_bot"}, allowed: map[int64]bool{1001: true}}
	tests := []struct {
		name, update string
		ok           bool
		kind, text   string
	}{
		{"reaction", `{"update_id":5,"message_reaction":{"chat":{"id":1,"type":"private"},"message_id":3,"user":{"id":1001},"date":1,"old_reaction":[],"new_reaction":[{"type":"emoji","emoji":"❤"}]}}`, true, kindReaction, "❤"},
		{"reaction removed", `{"update_id":5,"message_reaction":{"chat":{"id":1,"type":"private"},"message_id":3,"user":{"id":1001},"date":1,"old_reaction":[{"type":"emoji","emoji":"❤"}],"new_reaction":[]}}`, false, kindIgnored, ""},
		{"kicked", `{"update_id":6,"my_chat_member":{"chat":{"id":1,"type":"private"},"from":{"id":1001},"date":1,"old_chat_member":{"status":"member","user":{"id":1}},"new_chat_member":{"status":"kicked","user":{"id":1},"until_date":0}}}`, false, kindIgnored, ""},
		{"bot sender", `{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"from":{"id":1001,"is_bot":true},"text":"hi"}}`, false, kindIgnored, ""},
		{"text mention", `{"update_id":2,"message":{"message_id":2,"date":1,"chat":{"id":-5,"type":"group"},"from":{"id":1001},"text":"Anima, hi","entities":[{"type":"text_mention","offset":0,"length":5,"user":{"id":123456}}]}}`, true, kindMessage, ", hi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var u models.Update
			if err := json.Unmarshal([]byte(tc.update), &u); err != nil {
				t.Fatal(err)
			}
			v := cl.classify(&u, time.Now())
			if v.ok != tc.ok || v.kind != tc.kind || v.sig.Text != tc.text {
				t.Errorf("verdict ok=%v kind=%q text=%q, want ok=%v kind=%q text=%q", v.ok, v.kind, v.sig.Text, tc.ok, tc.kind, tc.text)
			}
		})
	}
}

// TestNewNeedsAToken: the channel judges no configuration (package bot/config does, and
// its tests hold the cases that were here: mode, webhook listen, secret token and path);
// a client without a token still cannot be built.
func TestNewNeedsAToken(t *testing.T) {
	t.Parallel()
	rec, sink := channelstest.NewRecorder(0), newSink()
	if _, err := New(Config{}, rec, sink, Options{}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("err = %v, want mention of the token", err)
	}
}

// TestReactionsOnlyToOwnMessages: with a sent log, a reaction becomes a signal only when
// it is to a message anima sent; others are counted as reaction_other.
func TestReactionsOnlyToOwnMessages(t *testing.T) {
	t.Parallel()
	cl := classifier{me: identity{id: 123456}, allowed: map[int64]bool{1001: true},
		own: func(chat int64, id int) bool { return chat == 1001 && id == 3 }}
	q := newQuotes()
	q.put(1001, 3, "See you at **eight**", false)
	cl.quoted = q.get
	for _, tc := range []struct {
		name   string
		msgID  int
		ok     bool
		kind   string
		reason string
	}{
		{"to anima's message", 3, true, kindReaction, ""},
		{"to the user's own message", 4, false, kindReactionOther, "did not send"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := fmt.Sprintf(`{"update_id":5,"message_reaction":{"chat":{"id":1001,"type":"private"},"message_id":%d,"user":{"id":1001},"date":1,"old_reaction":[],"new_reaction":[{"type":"emoji","emoji":"❤"}]}}`, tc.msgID)
			var u models.Update
			if err := json.Unmarshal([]byte(raw), &u); err != nil {
				t.Fatal(err)
			}
			v := cl.classify(&u, time.Now())
			if v.ok != tc.ok || v.kind != tc.kind || !strings.Contains(v.why, tc.reason) {
				t.Errorf("verdict = %+v, want ok %v kind %s", v, tc.ok, tc.kind)
			}
			if v.ok && (v.sig.Detail != "See you at eight" || v.sig.MessageID != 3 || v.sig.Text != "❤") {
				t.Errorf("signal = %+v, want ❤ on message 3 quoting its plain text", v.sig)
			}
		})
	}
}

// TestQuotesKeepTheLatest: the channel quotes the latest quoteKeep messages it sent, each
// cut to quoteRunes; older ones are forgotten.
func TestQuotesKeepTheLatest(t *testing.T) {
	t.Parallel()
	q := newQuotes()
	long := strings.Repeat("ж", quoteRunes+50)
	q.put(1, 1, long, true)
	if got := q.get(1, 1); got != strings.Repeat("ж", quoteRunes) {
		t.Errorf("quote of a long message has %d runes, want %d", len([]rune(got)), quoteRunes)
	}
	for id := 2; id <= quoteKeep+1; id++ {
		q.put(1, id, fmt.Sprint("message ", id), true)
	}
	if got := q.get(1, 1); got != "" {
		t.Errorf("the oldest message is still quoted (%q) after %d newer ones", got, quoteKeep)
	}
	if got := q.get(1, quoteKeep+1); got != fmt.Sprint("message ", quoteKeep+1) {
		t.Errorf("latest quote = %q", got)
	}
	if got := q.get(2, quoteKeep+1); got != "" {
		t.Errorf("another chat's message id quoted %q", got)
	}
}

// TestQuotesForgetAChat: once a chat is forgotten, no reaction to a message it was sent
// is quoted; other chats' quotes stay.
func TestQuotesForgetAChat(t *testing.T) {
	t.Parallel()
	q := newQuotes()
	q.put(1003, 1, "echo: my bank pin is SILVERKEY 4711", true)
	q.put(1004, 2, "someone else's", true)
	q.forget(1003)
	if got := q.get(1003, 1); got != "" {
		t.Errorf("a forgotten chat's message is quoted: %q", got)
	}
	if got := q.get(1004, 2); got != "someone else's" {
		t.Errorf("another chat's quote = %q", got)
	}
}

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
