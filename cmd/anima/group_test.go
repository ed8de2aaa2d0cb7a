package main

import (
	"context"
	"testing"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// Two allowed members of one group.
const (
	memberA = 111
	memberB = 222
	group   = -100500
)

// writeGroupConfig writes a configuration allowing memberA and memberB.
func writeGroupConfig(t *testing.T, dir, tgURL, aiURL string) string {
	t.Helper()
	return writeConfigWith(t, dir, testConfig{tgURL: tgURL, aiURL: aiURL, users: []int64{memberA, memberB}})
}

func mention(text string) string { return "@" + telegramtest.DefaultBotName + " " + text }

func waitSentTo(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat int64, n int) []telegramtest.Message {
	t.Helper()
	if err := tg.WaitFor(ctx, func() bool { return len(tg.SentTo(chat)) >= n }); err != nil {
		t.Fatalf("waiting for %d messages to chat %d: %v; got %d", n, chat, err, len(tg.SentTo(chat)))
	}
	return tg.SentTo(chat)
}
