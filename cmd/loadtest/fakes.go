package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// Fakes only: the two fake servers for `anima init` and `anima run` started by hand (or by
// scripts/first-run), and a person who sends the bot init's one-time code.
const fakesUser = int64(4242) // the person's user id (and private chat id)

// fakesOnly starts the fake Telegram and OpenAI servers and prints their URLs, the token the
// fake Telegram accepts and the person's user id, then `ready`. When the bot first
// long-polls getUpdates (anima init waiting for the one-time code it printed) and a line
// "code CODE" has come on lt.in, the person writes "/start CODE", and `sent` is printed;
// the first sendMessage to their chat prints `answered <time since sent>` and the reply.
// It then serves until ctx ends (SIGTERM, SIGINT).
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
	code, err := readCode(ctx, lt.in)
	if err != nil {
		return stopped(ctx, err)
	}
	text := "/start " + code
	sent := time.Now()
	f.tg.PushText(fakesUser, fakesUser, text)
	lt.printf("sent %q from user %d\n", text, fakesUser)

	answered := func() bool { return len(f.tg.SentTo(fakesUser)) > 0 }
	if err := f.tg.WaitFor(ctx, answered); err != nil {
		return stopped(ctx, err)
	}
	m := f.tg.SentTo(fakesUser)[0]
	lt.printf("answered %s\nreply %q\n", m.At.Sub(sent).Round(time.Millisecond), m.Visible)

	<-ctx.Done()
	return nil
}

// readCode returns CODE from the first line "code CODE" of in, or ctx's error if it ends
// first (the reading goroutine then ends with in: the process is stopping).
func readCode(ctx context.Context, in io.Reader) (string, error) {
	got := make(chan string, 1)
	go func() {
		defer close(got)
		for sc := bufio.NewScanner(in); sc.Scan(); {
			if code, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "code "); ok && code != "" {
				got <- code
				return
			}
		}
	}()
	select {
	case code, ok := <-got:
		if !ok {
			return "", errors.New(`input ended without a line "code CODE" (anima init's one-time code)`)
		}
		return code, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stopped is nil when err is ctx ending (a signal: the normal way to stop), else err.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return fmt.Errorf("fakes: %w", err)
}
