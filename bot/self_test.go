package bot_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/storage"
)

// TestDreamLeavesSomethingOfItsOwn follows anima's self note and a thought to share from
// the dream to the message, on the manual clock through bot.Assemble's parts (as `anima
// sim` drives them): the dream's tools write the note and one share; the loop takes them
// (Loop.Apply); the share raises thought pressure, which the gates hold through quiet
// hours; the proactive run it wakes names it, and the message sent consumes it; the next
// chat run shows the note.
func TestDreamLeavesSomethingOfItsOwn(t *testing.T) {
	t.Parallel()
	const chat = 7
	ai := openaitest.New(t)
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == openai.ChatMessageRoleTool:
			return openaitest.Reply{Content: ""} // the dream is done
		case strings.Contains(last.Content, "This is your nightly reflection"):
			return openaitest.Reply{ToolCalls: []openaitest.Call{
				{Name: "innerlife_self_note", Args: `{"note":"Sam calls me the owl. I think herons are braver than they look."}`},
				{Name: "innerlife_share_later", Args: `{"text":"a heron waits an hour for one fish","tied_to":"Sam's driving lessons","expires_in_days":2}`},
			}}
		case last.Role == openai.ChatMessageRoleSystem:
			return openaitest.Answer("Sam! A heron waits an hour for one fish. Patience, for Thursday's lesson.", "active", 0.9)
		}
		return openaitest.Answer("Good luck with the lessons!", "active", 0.9)
	})
	cfg := config.Default()
	cfg.User.Timezone = "UTC"
	cfg.Proactive.Enabled = true
	cfg.Proactive.MinSilence = config.Duration(72 * time.Hour) // silence alone wakes nothing here
	cfg.Proactive.Cooldown = config.Duration(time.Hour)
	cfg.Proactive.MaxPerDay = 3
	cfg.Proactive.QuietHours = proactiveQuiet(t, "22:00-08:00")
	store, err := storage.Open(filepath.Join(t.TempDir(), "anima.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	start := time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC) // a Monday evening
	clock := braintest.NewClock(start)
	parts, err := bot.Assemble(cfg, store, bot.Options{Clock: clock, Logger: slog.New(slog.DiscardHandler),
		LLM: cognition.NewClient(ai.URL(), "test", 5*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	st := parts.State
	out := &outbox{}
	l := loop.New(loop.NewInbox(), out, bot.LoopConfig(cfg, false), parts.LoopDeps())
	chats := func() ([]brain.Relationship, error) {
		var rels []brain.Relationship
		for _, r := range st.Rels {
			rels = append(rels, *r)
		}
		return rels, nil
	}
	jobs := parts.Plugins.Jobs(parts.Cognition, parts.Journal, parts.Zone, chats, l.Apply)
	ctx := context.Background()
	say := func(now time.Time, text string) {
		t.Helper()
		sigs, err := store.Record("test", []brain.Signal{{Type: brain.SignalUserMessage, Source: "test", Chat: chat, User: chat,
			UserName: "Sam", Text: text, At: now}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		clock.Set(now)
		l.Drive(ctx, now, sigs)
	}
	say(start, "I started driving lessons today")
	if n := len(out.sent()); n != 1 {
		t.Fatalf("%d messages after the user's, want the answer", n)
	}

	// Through the night to the morning after, a step a minute: the dream at 04:00.
	var sharedAt time.Time
	for now := start.Add(time.Minute); now.Before(start.Add(26 * time.Hour)); now = now.Add(time.Minute) {
		clock.Set(now)
		l.Drive(ctx, now, nil)
		jobs.Step(ctx, now)
		if len(out.sent()) == 2 {
			sharedAt = now
			break
		}
	}
	rel := st.Rel(chat)
	if rel.Note() != "Sam calls me the owl. I think herons are braver than they look." {
		t.Errorf("self note after the dream: %q", rel.Note())
	}
	if sharedAt.IsZero() {
		t.Fatalf("no message the day after the dream; shares %+v", rel.Shares())
	}
	t.Logf("the thought was shared at %s (dream 04:00, quiet hours until 08:00)", sharedAt.Format("Mon 15:04"))
	if h := sharedAt.Hour(); h < 8 || h >= 22 || sharedAt.Day() != 3 {
		t.Errorf("shared at %s: want Tuesday, outside quiet hours", sharedAt)
	}
	reqs := ai.Requests()
	ask := reqs[len(reqs)-1].Body.Messages
	if got := ask[len(ask)-1].Content; !strings.Contains(got, `meaning to share something with them: "a heron waits an hour for one fish"`) {
		t.Errorf("the proactive ask does not name the thought:\n%s", got)
	}
	if len(rel.Shares()) != 0 {
		t.Errorf("shares after the message that used it: %+v, want none (consumed)", rel.Shares())
	}

	// Another day: nothing more to share, and silence alone (72 h) wakes nothing.
	for now := sharedAt.Add(time.Minute); now.Before(sharedAt.Add(24 * time.Hour)); now = now.Add(5 * time.Minute) {
		clock.Set(now)
		l.Drive(ctx, now, nil)
	}
	if n := len(out.sent()); n != 2 {
		t.Errorf("%d messages a day later, want 2: a used thought is not shared again", n)
	}
	calls := len(ai.Requests())
	say(sharedAt.Add(25*time.Hour), "haha, thanks owl")
	reqs = ai.Requests()
	if len(reqs) != calls+1 {
		t.Fatalf("%d model calls for a plain message, want 1", len(reqs)-calls)
	}
	if raw := string(reqs[len(reqs)-1].Raw); !strings.Contains(raw, "Sam calls me the owl") {
		t.Errorf("the chat prompt does not show the self note:\n%s", raw)
	}
}

// outbox records what the loop sends.
type outbox struct {
	mu   sync.Mutex
	msgs []brain.SendMessage
}

func (o *outbox) Send(_ context.Context, m brain.SendMessage) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, m)
	return nil
}

func (o *outbox) sent() []brain.SendMessage {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]brain.SendMessage(nil), o.msgs...)
}
