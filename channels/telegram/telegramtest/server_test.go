package telegramtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
)

// newClient is a fake Bot API server and a real go-telegram client of it.
func newClient(t *testing.T) (*Server, *bot.Bot) {
	t.Helper()
	s := New(t)
	b, err := bot.New(s.Token, bot.WithServerURL(s.URL), bot.WithSkipGetMe())
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// rawCall posts a JSON body and decodes the envelope.
func rawCall(t *testing.T, s *Server, token, method, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(s.URL+"/bot"+token+"/"+method, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("decode %s answer: %v", method, err)
	}
	return resp.StatusCode, env
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRouting(t *testing.T) {
	t.Parallel()
	s := New(t)
	tests := []struct {
		name, token, method, body string
		status                    int
		desc                      string
	}{
		{"wrong token", "1:bad", "getMe", "{}", 401, "Unauthorized"},
		{"unknown method", s.Token, "sendTelepathy", "{}", 404, "Not Found"},
		{"missing chat_id", s.Token, "sendMessage", `{"text":"hi"}`, 400, "Bad Request: chat_id is empty"},
		{"missing text", s.Token, "sendMessage", `{"chat_id":5}`, 400, "Bad Request: text is empty"},
		{"getMe ok", s.Token, "getMe", "", 200, ""},
		{"case-insensitive method", s.Token, "GETME", "", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, env := rawCall(t, s, tc.token, tc.method, tc.body)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%v)", status, tc.status, env)
			}
			if tc.desc != "" && env["description"] != tc.desc {
				t.Errorf("description = %v, want %q", env["description"], tc.desc)
			}
			if tc.status != 200 && env["error_code"] != float64(tc.status) {
				t.Errorf("error_code = %v, want %d", env["error_code"], tc.status)
			}
		})
	}
}

func TestURLEncodedBody(t *testing.T) {
	t.Parallel()
	s := New(t)
	form := url.Values{"chat_id": {"7"}, "text": {"form body"}}
	resp, err := http.PostForm(s.URL+"/bot"+s.Token+"/sendMessage", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := s.SentTo(7); len(got) != 1 || got[0].Text != "form body" {
		t.Fatalf("sent = %+v", got)
	}
}

func TestGetUpdatesOffsetSemantics(t *testing.T) {
	t.Parallel()
	s := New(t)
	ids := []int64{s.PushText(1, 1, "a"), s.PushText(1, 1, "b"), s.PushText(1, 1, "c")}
	get := func(body string) []int64 {
		t.Helper()
		status, env := rawCall(t, s, s.Token, "getUpdates", body)
		if status != 200 {
			t.Fatalf("getUpdates: %d %v", status, env)
		}
		var got []int64
		for _, u := range env["result"].([]any) {
			got = append(got, int64(u.(map[string]any)["update_id"].(float64)))
		}
		return got
	}
	if got := get(`{}`); !cmp.Equal(got, ids) {
		t.Fatalf("no offset: %v, want %v", got, ids)
	}
	// Without a higher offset nothing is confirmed: the same updates come again.
	if got := get(`{"limit":2}`); !cmp.Equal(got, ids[:2]) {
		t.Fatalf("limit 2: %v", got)
	}
	if got := get(`{"offset":` + jsonInt(ids[1]) + `}`); !cmp.Equal(got, ids[1:]) {
		t.Fatalf("offset %d: %v", ids[1], got)
	}
	// Confirmed updates are gone even for a lower offset later.
	if got := get(`{"offset":1}`); !cmp.Equal(got, ids[1:]) {
		t.Fatalf("lower offset again: %v", got)
	}
	if got := get(`{"offset":` + jsonInt(ids[2]+1) + `}`); len(got) != 0 {
		t.Fatalf("all confirmed: %v", got)
	}
	if diff := cmp.Diff([]int64{}, s.Pending()); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if got := s.MaxPollOffset(); got != ids[2]+1 {
		t.Errorf("MaxPollOffset = %d", got)
	}
}

func jsonInt(i int64) string { b, _ := json.Marshal(i); return string(b) }

func TestGetUpdatesLongPollReturnsOnPush(t *testing.T) {
	t.Parallel()
	s := New(t)
	done := make(chan []int64, 1)
	go func() {
		_, env := rawCall(t, s, s.Token, "getUpdates", `{"timeout":30}`)
		var ids []int64
		for _, u := range env["result"].([]any) {
			ids = append(ids, int64(u.(map[string]any)["update_id"].(float64)))
		}
		done <- ids
	}()
	ctx := testCtx(t)
	if err := s.WaitFor(ctx, func() bool { return len(s.Polls()) == 1 }); err != nil {
		t.Fatal(err)
	}
	id := s.PushText(1, 1, "wake")
	select {
	case got := <-done:
		if !cmp.Equal(got, []int64{id}) {
			t.Fatalf("got %v, want [%d]", got, id)
		}
	case <-ctx.Done():
		t.Fatal("long poll did not return after a push")
	}
}

func TestGetUpdatesLongPollEndsOnClose(t *testing.T) {
	t.Parallel()
	s := New(t)
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL+"/bot"+s.Token+"/getUpdates", "application/json", strings.NewReader(`{"timeout":60}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	ctx := testCtx(t)
	if err := s.WaitFor(ctx, func() bool { return len(s.Polls()) == 1 }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("long poll still pending after Close")
	}
}

func TestGetUpdatesConflictWhileWebhookSet(t *testing.T) {
	t.Parallel()
	s, b := newClient(t)
	ctx := testCtx(t)
	if _, err := b.SetWebhook(ctx, &bot.SetWebhookParams{URL: "https://example.org/hook", SecretToken: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	if status, _ := rawCall(t, s, s.Token, "getUpdates", `{}`); status != 409 {
		t.Fatalf("getUpdates with webhook: %d, want 409", status)
	}
	if wh := s.Webhooks(); len(wh) != 1 || wh[0].SecretToken != "s3cret" {
		t.Fatalf("webhooks = %+v", wh)
	}
	if _, err := b.DeleteWebhook(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if status, _ := rawCall(t, s, s.Token, "getUpdates", `{}`); status != 200 {
		t.Fatalf("getUpdates after deleteWebhook: %d", status)
	}
}

func TestSendMessageThroughLibrary(t *testing.T) {
	t.Parallel()
	s, b := newClient(t)
	ctx := testCtx(t)
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{
		ChatID:          int64(42),
		Text:            "<b>hi</b> &lt;3",
		ParseMode:       models.ParseModeHTML,
		ReplyParameters: &models.ReplyParameters{MessageID: 9},
		ReplyMarkup: models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{
			{{Text: "Yes", CallbackData: "/yes"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := got[0]
	if m.ChatID != 42 || m.Visible != "hi <3" || m.ParseMode != "HTML" || m.ReplyTo != 9 {
		t.Errorf("message = %+v", m)
	}
	if !strings.Contains(string(m.ReplyMarkup), `"callback_data":"/yes"`) {
		t.Errorf("reply markup = %s", m.ReplyMarkup)
	}
}

func TestSendMessageLength(t *testing.T) {
	t.Parallel()
	_, b := newClient(t)
	ctx := testCtx(t)
	tests := []struct {
		name, text string
		mode       models.ParseMode
		ok         bool
	}{
		{"4096 ascii", strings.Repeat("a", 4096), "", true},
		{"4097 ascii", strings.Repeat("a", 4097), "", false},
		// An emoji outside the BMP is two UTF-16 units.
		{"2048 emoji", strings.Repeat("😀", 2048), "", true},
		{"2049 emoji", strings.Repeat("😀", 2049), "", false},
		// Tags and entities do not count.
		{"html 4096 visible", "<b>" + strings.Repeat("&lt;", 4096) + "</b>", models.ParseModeHTML, true},
		{"html 4097 visible", "<b>" + strings.Repeat("&lt;", 4097) + "</b>", models.ParseModeHTML, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(1), Text: tc.text, ParseMode: tc.mode})
			if tc.ok && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "message is too long")) {
				t.Fatalf("err = %v, want message is too long", err)
			}
		})
	}
}

func TestParseHTML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, visible string
		wantErr     string
	}{
		{in: "plain", visible: "plain"},
		{in: `<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>n</ins><s>s</s><strike>k</strike><del>d</del>`, visible: "bsieunskd"},
		{in: `<a href="https://x.org/?a=1&amp;b=2">link</a>`, visible: "link"},
		{in: `<pre><code class="language-go">x &lt; y</code></pre>`, visible: "x < y"},
		{in: `<blockquote expandable>q</blockquote><tg-spoiler>s</tg-spoiler><span class="tg-spoiler">p</span>`, visible: "qsp"},
		{in: "&#128512; &#x41;&quot;", visible: "😀 A\""},
		{in: "<b>unclosed", wantErr: "Can't find end tag"},
		{in: "<b><i>x</b></i>", wantErr: "Can't find end tag"},
		{in: "x</b>", wantErr: "Unexpected end tag"},
		{in: "<div>x</div>", wantErr: "Unsupported start tag \"div\""},
		{in: "1 < 2", wantErr: "byte offset 2"},
		{in: "a > b", wantErr: "'>'"},
		{in: "R&D", wantErr: "'&'"},
		{in: "<a>x</a>", wantErr: "href"},
		{in: `<span class="x">x</span>`, wantErr: "tg-spoiler"},
		{in: `<b onclick="x">x</b>`, wantErr: "Unsupported attribute"},
		{in: "<code><b>x</b></code>", wantErr: "inside \"code\""},
		{in: "<b", wantErr: "Unclosed start tag"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseHTML(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.visible {
				t.Errorf("visible = %q, want %q", got, tc.visible)
			}
		})
	}
}

func TestHTMLErrorThroughLibrary(t *testing.T) {
	t.Parallel()
	s, b := newClient(t)
	_, err := b.SendMessage(testCtx(t), &bot.SendMessageParams{ChatID: int64(1), Text: "<b>x", ParseMode: models.ParseModeHTML})
	if !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), "can't parse entities") {
		t.Fatalf("err = %v", err)
	}
	if len(s.Sent()) != 0 {
		t.Fatal("a rejected message was recorded as sent")
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	s, b := newClient(t)
	ctx := testCtx(t)
	send := func() error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(1), Text: "x"})
		return err
	}

	s.FailNext("sendMessage", 1, 429, 7)
	var tmr *bot.TooManyRequestsError
	if err := send(); !errors.As(err, &tmr) || tmr.RetryAfter != 7 {
		t.Fatalf("429: err = %v", err)
	}
	s.FailNext("sendMessage", 1, 403, 0)
	if err := send(); !errors.Is(err, bot.ErrorForbidden) || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("403: err = %v", err)
	}
	s.FailNext("sendMessage", 1, 500, 0)
	if err := send(); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("500: err = %v", err)
	}
	s.InjectFault("sendMessage", Fault{Code: 502, RawBody: "<html>bad gateway</html>"})
	if err := send(); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Fatalf("non-JSON: err = %v", err)
	}
	if err := send(); err != nil {
		t.Fatalf("after faults: %v", err)
	}
	if n := len(s.Sent()); n != 1 {
		t.Fatalf("sent %d messages, want 1 (failed ones are not delivered)", n)
	}
	statuses := []int{}
	for _, c := range s.CallsTo("sendMessage") {
		statuses = append(statuses, c.Status)
	}
	if diff := cmp.Diff([]int{429, 403, 500, 502, 200}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestPushRawKeepsMalformed(t *testing.T) {
	t.Parallel()
	s := New(t)
	id := s.PushRaw([]byte(`{"message":"not an object"}`))
	resp, err := http.Get(s.URL + "/bot" + s.Token + "/getUpdates")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	want := `{"message":"not an object","update_id":` + jsonInt(id) + `}`
	if !strings.Contains(string(body), want) {
		t.Fatalf("body %s does not contain %s", body, want)
	}
}

func TestEntities(t *testing.T) {
	t.Parallel()
	got := Entities("/help@anima_bot hi 😀 @anima_bot")
	want := []models.MessageEntity{
		{Type: models.MessageEntityTypeBotCommand, Offset: 0, Length: 15},
		{Type: models.MessageEntityTypeMention, Offset: 22, Length: 10},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entities (-want +got):\n%s", diff)
	}
}

// TestReactionMatchesSpec checks the message_reaction builder against the embedded Bot
// API description: every required field of MessageReactionUpdated is present, and
// nothing the type does not have.
func TestReactionMatchesSpec(t *testing.T) {
	t.Parallel()
	types, err := loadTypes()
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := types["MessageReactionUpdated"] // field → required
	if !ok {
		t.Fatal("the spec has no MessageReactionUpdated")
	}
	r := Reaction(7, 7, 3, "👍")
	raw, err := json.Marshal(models.Update{ID: 1, MessageReaction: &r})
	if err != nil {
		t.Fatal(err)
	}
	var u struct {
		MessageReaction map[string]json.RawMessage `json:"message_reaction"`
	}
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	for name, required := range spec {
		if _, ok := u.MessageReaction[name]; required && !ok {
			t.Errorf("required field %s missing: %s", name, raw)
		}
	}
	for name := range u.MessageReaction {
		if _, known := spec[name]; !known {
			t.Errorf("field %s is not in the spec's MessageReactionUpdated", name)
		}
	}
	if !strings.Contains(string(u.MessageReaction["new_reaction"]), `"emoji":"👍"`) {
		t.Errorf("new_reaction = %s", u.MessageReaction["new_reaction"])
	}

	// Pushed, it comes back from getUpdates and decodes through the library's models.
	s := New(t)
	id := s.PushReaction(7, 7, 3, "❤")
	status, body := rawCall(t, s, s.Token, "getUpdates", `{}`)
	raw, _ = json.Marshal(body["result"])
	var got []models.Update
	if err := json.Unmarshal(raw, &got); status != 200 || err != nil || len(got) != 1 {
		t.Fatalf("getUpdates = %d %s (%v)", status, raw, err)
	}
	if g := got[0]; g.ID != id || g.MessageReaction == nil || g.MessageReaction.MessageID != 3 ||
		len(g.MessageReaction.NewReaction) != 1 || g.MessageReaction.NewReaction[0].ReactionTypeEmoji.Emoji != "❤" {
		t.Errorf("update = %s", raw)
	}
}

func TestSendMessageDraftFollowsTheSpec(t *testing.T) {
	t.Parallel()
	s := New(t)
	tests := []struct {
		name, body string
		status     int
	}{
		{"private chat", `{"chat_id": 42, "draft_id": 7, "text": "<b>Hel</b>lo", "parse_mode": "HTML"}`, 200},
		{"placeholder", `{"chat_id": 42, "draft_id": 7}`, 200},
		{"group chat", `{"chat_id": -100123, "draft_id": 7, "text": "hi"}`, 400},
		{"no draft id", `{"chat_id": 42, "text": "hi"}`, 400},
		{"zero draft id", `{"chat_id": 42, "draft_id": 0, "text": "hi"}`, 400},
		{"no chat", `{"draft_id": 7, "text": "hi"}`, 400},
		{"bad HTML", `{"chat_id": 42, "draft_id": 7, "text": "<b>open", "parse_mode": "HTML"}`, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if status, env := rawCall(t, s, s.Token, "sendMessageDraft", tc.body); status != tc.status {
				t.Errorf("status %d (%v), want %d", status, env, tc.status)
			}
		})
	}
	ds := s.DraftsTo(42)
	if len(ds) != 2 || ds[0].Visible != "Hello" || ds[0].DraftID != 7 || ds[1].Text != "" {
		t.Fatalf("drafts = %+v", ds)
	}
	if got, err := s.WaitDrafts(context.Background(), 2); err != nil || len(got) != 2 {
		t.Fatalf("WaitDrafts = %d, %v", len(got), err)
	}
	if len(s.Sent()) != 0 {
		t.Error("a draft was recorded as a sent message")
	}
}

// The media builders and getFile's answer are what the Bot API spec says they are.
func TestMediaBuildersMatchTheSpec(t *testing.T) {
	t.Parallel()
	s := New(t)
	voice := s.VoiceMessage(1, 1, []byte("hi"), 3)
	photo := s.PhotoMessage(1, 1, "c", Image{Width: 2, Height: 1, Data: []byte("p")})
	doc := s.DocumentMessage(1, 1, "a.txt", "text/plain", []byte("x"), "")
	for name, v := range map[string]any{"Voice": voice.Voice, "PhotoSize": photo.Photo[0], "Document": doc.Document,
		"File": models.File{FileID: "f", FileUniqueID: "u", FilePath: "voice/file_0.oga"}} {
		bad, err := CheckType(name, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	}
	if bad, _ := CheckType("Voice", map[string]any{"file_id": "x", "colour": 1}); len(bad) != 3 {
		t.Errorf("CheckType missed problems: %v", bad)
	}
}

// The download path carries the token, as Telegram's does: a wrong one is refused.
func TestFileDownloadPath(t *testing.T) {
	t.Parallel()
	s := New(t)
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
