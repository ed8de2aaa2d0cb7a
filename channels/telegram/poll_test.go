package telegram

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

func TestPollingRecordsBeforeConfirming(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	var (
		mu         sync.Mutex
		violations []string
	)
	h.rec.OnStore(func(offset int64) {
		// Record runs before the fake may see an offset this high.
		if got := h.srv.MaxPollOffset(); got >= offset {
			mu.Lock()
			violations = append(violations, "offset "+strconv.FormatInt(got, 10)+" confirmed before record of "+strconv.FormatInt(offset, 10))
			mu.Unlock()
		}
	})
	id := h.srv.PushText(alice, alice, "hello there")
	before := time.Now()
	h.start(t)

	sig := h.sink.next(t)
	if sig.Received.Before(before.Truncate(0)) || sig.Received.After(time.Now()) {
		t.Errorf("received = %v, want the time the channel recorded it (between %v and now)", sig.Received, before)
	}
	want := brain.Signal{
		ID: 1, Type: brain.SignalUserMessage, Source: "telegram", Chat: alice, User: alice,
		UserName: "User1001", Text: "hello there", Ref: strconv.FormatInt(id, 10),
	}
	if diff := cmp.Diff(want, sig, cmpopts.IgnoreFields(brain.Signal{}, "At", "MessageID", "Received")); diff != "" {
		t.Errorf("signal (-want +got):\n%s", diff)
	}
	if sig.MessageID == 0 || sig.At.IsZero() {
		t.Errorf("signal lacks message id or time: %+v", sig)
	}
	if err := h.srv.WaitPollOffset(testCtx(t), id+1); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	if _, offset := h.rec.Snapshot(); offset != id+1 {
		t.Errorf("stored offset %d, want %d", offset, id+1)
	}
	if n := len(h.srv.CallsTo("deleteWebhook")); n != 1 {
		t.Errorf("deleteWebhook called %d times, want 1", n)
	}
}

func TestPollingRestartSkipsSeenUpdates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	old := h.srv.PushText(alice, alice, "already handled")
	fresh := h.srv.PushText(alice, alice, "new")
	h.rec.SetOffset(old + 1) // as if a previous run recorded old but crashed before confirming it
	h.start(t)

	sig := h.sink.next(t)
	if sig.Text != "new" || sig.Ref != strconv.FormatInt(fresh, 10) {
		t.Fatalf("signal = %+v, want the new update only", sig)
	}
	h.rec.WaitOffset(t, fresh+1)
	if polls := h.srv.Polls(); polls[0].Offset != old+1 {
		t.Errorf("first getUpdates offset %d, want stored %d", polls[0].Offset, old+1)
	}
	sigs, _ := h.rec.Snapshot()
	if len(sigs) != 1 {
		t.Errorf("recorded %d signals, want 1", len(sigs))
	}
}

func TestPollingBatchSurvivesOddUpdates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	srv := h.srv
	var ids []int64
	ids = append(ids, srv.PushRaw([]byte(`{"message":"not an object"}`))) // malformed
	sticker := telegramtest.TextMessage(alice, alice, models.ChatTypePrivate, "")
	sticker.Sticker = &models.Sticker{FileID: "s", Emoji: "👍"}
	ids = append(ids, srv.PushMessage(sticker))
	photo := telegramtest.TextMessage(alice, alice, models.ChatTypePrivate, "")
	photo.Photo = []models.PhotoSize{{FileID: "p", Width: 1, Height: 1}}
	photo.Caption = "look at this"
	ids = append(ids, srv.PushMessage(photo))
	bare := telegramtest.TextMessage(alice, alice, models.ChatTypePrivate, "")
	bare.Photo = []models.PhotoSize{{FileID: "p2", Width: 1, Height: 1}}
	ids = append(ids, srv.PushMessage(bare))
	edited := telegramtest.TextMessage(alice, alice, models.ChatTypePrivate, "edit")
	edited.ID, edited.Date, edited.EditDate = 5, 1, 2
	ids = append(ids, srv.PushUpdate(models.Update{EditedMessage: &edited}))
	ids = append(ids, srv.PushText(bob, bob, "let me in"))
	ids = append(ids, srv.PushCallback(alice, alice, "/forget yes"))
	ids = append(ids, srv.PushText(alice, alice, "/help@anima_bot now"))
	ids = append(ids, srv.PushRaw([]byte(`{"channel_post":{"message_id":1,"date":1,"chat":{"id":-5,"type":"channel"},"text":"news"}}`)))
	last := ids[len(ids)-1]
	h.start(t)

	got := []brain.Signal{h.sink.next(t), h.sink.next(t), h.sink.next(t), h.sink.next(t)}
	h.rec.WaitOffset(t, last+1)
	want := []brain.Signal{
		{Type: brain.SignalUserMessage, Text: "look at this", Ref: strconv.FormatInt(ids[2], 10),
			Media: &brain.Media{Kind: brain.MediaPhoto, FileID: "p", Mime: "image/jpeg", Width: 1, Height: 1}},
		// A photo without a caption is a message too: the model is shown the photo.
		{Type: brain.SignalUserMessage, Ref: strconv.FormatInt(ids[3], 10),
			Media: &brain.Media{Kind: brain.MediaPhoto, FileID: "p2", Mime: "image/jpeg", Width: 1, Height: 1}},
		{Type: brain.SignalCommand, Text: "/forget yes", Ref: strconv.FormatInt(ids[6], 10)},
		{Type: brain.SignalCommand, Text: "/help now", Ref: strconv.FormatInt(ids[7], 10)},
	}
	opt := cmpopts.IgnoreFields(brain.Signal{}, "ID", "Source", "Chat", "User", "UserName", "At", "MessageID", "Received")
	if diff := cmp.Diff(want, got, opt); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
	for _, s := range got {
		if s.User != alice || s.Chat != alice {
			t.Errorf("signal from chat %d user %d, want alice", s.Chat, s.User)
		}
	}
	if err := srv.WaitFor(testCtx(t), func() bool { return len(srv.CallbackAnswers()) == 1 }); err != nil {
		t.Errorf("callback query not answered: %v", err)
	}
	for kind, n := range map[string]float64{"malformed": 1, "unauthorized": 1, "ignored": 3, "command": 2, "message": 2} {
		if got := testutil.ToFloat64(h.ch.met.updates.WithLabelValues(kind)); got != n {
			t.Errorf("updates_total{kind=%q} = %v, want %v", kind, got, n)
		}
	}
	if got := testutil.ToFloat64(h.ch.met.requests.WithLabelValues("getUpdates", "ok")); got < 1 {
		t.Errorf("requests_total{getUpdates,ok} = %v", got)
	}
}

func TestPollingRetriesAfterErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.FailNext("getUpdates", 1, 500, 0)
	h.srv.FailNext("getUpdates", 1, 429, 3)
	h.srv.FailNext("getUpdates", 1, 409, 0)
	h.rec.FailNext(1)
	id := h.srv.PushText(alice, alice, "persist")
	h.start(t)

	if sig := h.sink.next(t); sig.Text != "persist" {
		t.Fatalf("signal %+v", sig)
	}
	sigs := h.rec.WaitOffset(t, id+1)
	if len(sigs) != 1 {
		t.Errorf("recorded %d signals, want 1 (no duplicate after the failed record)", len(sigs))
	}
	waits := h.sleeps.all()
	if len(waits) < 4 {
		t.Fatalf("waits %v, want one per failure", waits)
	}
	if waits[1].Seconds() != 3 {
		t.Errorf("429 wait %v, want retry_after 3s", waits[1])
	}
	if got := testutil.ToFloat64(h.ch.met.requests.WithLabelValues("getUpdates", "rate_limited")); got != 1 {
		t.Errorf("rate_limited = %v", got)
	}
}

func TestGroupRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	srv := h.srv
	sentByBot := srv.NextMessageID()
	reply := telegramtest.TextMessage(alice, group, models.ChatTypeSupergroup, "sure, why?")
	reply.ReplyToMessage = &models.Message{ID: sentByBot, Date: 1, From: &srv.Bot, Chat: models.Chat{ID: group, Type: models.ChatTypeSupergroup}}
	replyToOther := telegramtest.TextMessage(alice, group, models.ChatTypeSupergroup, "to carol")
	u := telegramtest.User(3003)
	replyToOther.ReplyToMessage = &models.Message{ID: 1, Date: 1, From: &u, Chat: models.Chat{ID: group, Type: models.ChatTypeSupergroup}}

	srv.PushGroupText(alice, group, "just chatting")                         // not addressed
	mention := srv.PushGroupText(alice, group, "hey @anima_bot how are you") // mention
	srv.PushGroupText(bob, group, "@anima_bot hi")                           // addressed, not allowed
	replyID := srv.PushMessage(reply)                                        // reply to the bot
	srv.PushMessage(replyToOther)                                            // reply to someone else
	srv.PushGroupText(alice, group, "/help@other_bot")                       // someone else's command
	last := srv.PushGroupText(alice, group, "/status@anima_bot")             // ours
	h.start(t)

	got := []brain.Signal{h.sink.next(t), h.sink.next(t), h.sink.next(t)}
	h.rec.WaitOffset(t, last+1)
	want := []brain.Signal{
		{Type: brain.SignalUserMessage, Text: "hey how are you", Ref: strconv.FormatInt(mention, 10)},
		{Type: brain.SignalUserMessage, Text: "sure, why?", Ref: strconv.FormatInt(replyID, 10)},
		{Type: brain.SignalCommand, Text: "/status", Ref: strconv.FormatInt(last, 10)},
	}
	opt := cmpopts.IgnoreFields(brain.Signal{}, "ID", "Source", "Chat", "User", "UserName", "At", "MessageID", "Received")
	if diff := cmp.Diff(want, got, opt); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
	for _, s := range got {
		if s.Chat != group || s.MessageID == 0 {
			t.Errorf("signal chat %d message %d, want group chat and a message id", s.Chat, s.MessageID)
		}
	}
	if sigs, _ := h.rec.Snapshot(); len(sigs) != 3 {
		t.Errorf("recorded %d signals, want 3", len(sigs))
	}
}

func TestPublicAcceptsAnyone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, func(c *Config, _ *Options) { c.Public = true; c.AllowedUsers = nil })
	h.srv.PushText(bob, bob, "hi")
	h.start(t)
	if sig := h.sink.next(t); sig.User != bob {
		t.Fatalf("signal %+v", sig)
	}
}

// A Record that keeps failing is retried with a growing backoff, not every RetryBase:
// the getUpdates that succeeds between two records must not reset it.
func TestPollingRecordFailuresBackOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.rec.FailNext(4)
	id := h.srv.PushText(alice, alice, "persist")
	h.start(t)

	if sig := h.sink.next(t); sig.Text != "persist" {
		t.Fatalf("signal %+v", sig)
	}
	h.rec.WaitOffset(t, id+1)
	waits := h.sleeps.all()
	if len(waits) != 4 {
		t.Fatalf("waits %v, want one per failed record", waits)
	}
	for i := 1; i < len(waits); i++ {
		if waits[i] <= waits[i-1] {
			t.Errorf("record retry waits %v do not grow", waits)
			break
		}
	}
}

// A batch that confirms nothing (here an update without a readable update_id; with
// Telegram, ids re-based below the stored offset) is polled again only after a backoff,
// not in a hot loop, and a later update still gets through.
func TestPollingBatchWithNothingNewBacksOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	h.srv.PushRaw([]byte(`"junk"`))
	h.start(t)
	if err := h.srv.WaitFor(testCtx(t), func() bool { return len(h.srv.Polls()) >= 3 }); err != nil {
		t.Fatal(err)
	}
	if len(h.sleeps.all()) == 0 {
		t.Fatal("polled again without waiting after a batch that confirmed nothing")
	}
	id := h.srv.PushText(alice, alice, "still here")
	if sig := h.sink.next(t); sig.Text != "still here" {
		t.Fatalf("signal %+v", sig)
	}
	h.rec.WaitOffset(t, id+1)
}

// TestDecodeBatchFollowsRebasedIDs: updates just below the offset are duplicates; updates
// far below it are Telegram's re-based ids, and the next offset follows them down.
func TestDecodeBatchFollowsRebasedIDs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	var raws []json.RawMessage
	for _, u := range []models.Update{textUpdate(4_999_999, alice, "dup"), textUpdate(10, alice, "new a"), textUpdate(11, alice, "new b")} {
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, b)
	}
	h.ch.me.Store(&identity{id: 1, username: "anima_bot"})
	sigs, _, next := h.ch.decodeBatch(raws, 5_000_000)
	if len(sigs) != 2 || sigs[0].Text != "new a" || sigs[1].Text != "new b" {
		t.Fatalf("signals %+v, want the two re-based updates", sigs)
	}
	if next != 12 {
		t.Errorf("next offset %d, want 12", next)
	}
}
