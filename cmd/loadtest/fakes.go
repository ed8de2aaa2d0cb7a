package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// Fakes only: the two fake servers for `anima init` and `anima run` started by hand (or by
// scripts/first-run), and a person who sends the bot init's one-time code.
const fakesUser = int64(4242) // the person's user id (and private chat id)

// fakesOnly starts the fake Telegram and OpenAI servers and prints their URLs, the token the
// fake Telegram accepts and the person's user id, then `ready`. Then it reads lt.in a line
// at a time: "code CODE" (anima init's one-time code) makes the person write "/start
// CODE" once the bot long-polls getUpdates (init waiting for it); "say TEXT" makes them
// write TEXT; each prints `sent`. Every message the bot sends to their chat prints
// `answered <time since the last sent>` and `reply "<text>"`, so the fakes can be used to
// talk to the bot. It serves until ctx ends (SIGTERM, SIGINT).
func (lt *loadtest) fakesOnly(ctx context.Context) error {
	f, err := newFakes()
	if err != nil {
		return err
	}
	defer f.close()
	var mu sync.Mutex // lt.out and sent, shared with the replies' printer
	var sent time.Time
	printf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lt.printf(format, args...)
	}
	printf("telegram %s\ntoken %s\nopenai %s\nuser %d\nready\n", f.tg.URL, f.tg.Token, f.ai.URL(), fakesUser)

	replies := make(chan error, 1)
	go func() {
		for n := 0; ; {
			if err := f.tg.WaitFor(ctx, func() bool { return len(f.tg.SentTo(fakesUser)) > n }); err != nil {
				replies <- err
				return
			}
			msgs := f.tg.SentTo(fakesUser)
			for _, m := range msgs[n:] {
				mu.Lock()
				lt.printf("answered %s\nreply %q\n", m.At.Sub(sent).Round(time.Millisecond), m.Visible)
				mu.Unlock()
			}
			n = len(msgs)
		}
	}()
	// anima init's first getUpdates has timeout 0 and skips what is already pending; its
	// long polls come after the instruction to write.
	longPoll := func() bool {
		return slices.ContainsFunc(f.tg.Polls(), func(p telegramtest.Poll) bool { return p.Timeout > 0 })
	}
	lines := readLines(ctx, lt.in)
	for {
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
		case <-ctx.Done():
			return nil
		}
		if !ok {
			break
		}
		text := ""
		if code, ok := strings.CutPrefix(line, "code "); ok && code != "" {
			if err := f.tg.WaitFor(ctx, longPoll); err != nil {
				return stopped(ctx, err)
			}
			text = "/start " + code
		} else if say, ok := strings.CutPrefix(line, "say "); ok && say != "" {
			text = say
		} else {
			continue
		}
		mu.Lock()
		sent = time.Now()
		mu.Unlock()
		f.tg.PushText(fakesUser, fakesUser, text)
		printf("sent %q from user %d\n", text, fakesUser)
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-replies:
		return stopped(ctx, err)
	}
}

// readLines sends each line of in, trimmed, until in ends (the channel closes) or ctx
// does (the reading goroutine then ends with in: the process is stopping).
func readLines(ctx context.Context, in io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(in); sc.Scan(); {
			select {
			case lines <- strings.TrimSpace(sc.Text()):
			case <-ctx.Done():
				return
			}
		}
	}()
	return lines
}

// stopped is nil when err is ctx ending (a signal: the normal way to stop), else err.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return fmt.Errorf("fakes: %w", err)
}
