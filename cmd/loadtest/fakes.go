package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// Fakes only: the two fake servers for `anima init` and `anima run` started by hand (or by
// scripts/first-run), and a person who writes once when the bot starts waiting.
const (
	fakesUser = int64(4242)   // the person's user id (and private chat id)
	fakesText = "hello anima" // what they write
)

// fakesOnly starts the fake Telegram and OpenAI servers and prints their URLs, the token the
// fake Telegram accepts and the person's user id, then `ready`. When the bot first
// long-polls getUpdates (anima init waiting for the owner's message, after it printed
// "Now send any message"), the person writes fakesText, and `sent` is printed; the first
// sendMessage to their chat prints `answered <time since sent>` and the reply. It then
// serves until ctx ends (SIGTERM, SIGINT).
func (lt *loadtest) fakesOnly(ctx context.Context) error {
	f, err := newFakes()
	if err != nil {
		return err
	}
	defer f.close()
	lt.printf("telegram %s\ntoken %s\nopenai %s\nuser %d\nready\n", f.tg.URL, f.tg.Token, f.ai.URL(), fakesUser)

	// anima init's first getUpdates has timeout 0 and skips what is already pending; its
	// long polls come after the instruction to write.
	longPoll := func() bool {
		return slices.ContainsFunc(f.tg.Polls(), func(p telegramtest.Poll) bool { return p.Timeout > 0 })
	}
	if err := f.tg.WaitFor(ctx, longPoll); err != nil {
		return stopped(ctx, err)
	}
	sent := time.Now()
	f.tg.PushText(fakesUser, fakesUser, fakesText)
	lt.printf("sent %q from user %d\n", fakesText, fakesUser)

	answered := func() bool { return len(f.tg.SentTo(fakesUser)) > 0 }
	if err := f.tg.WaitFor(ctx, answered); err != nil {
		return stopped(ctx, err)
	}
	m := f.tg.SentTo(fakesUser)[0]
	lt.printf("answered %s\nreply %q\n", m.At.Sub(sent).Round(time.Millisecond), m.Visible)

	<-ctx.Done()
	return nil
}

// stopped is nil when err is ctx ending (a signal: the normal way to stop), else err.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return fmt.Errorf("fakes: %w", err)
}
