// Package console is a channel over standard input and output: `anima chat` uses it to
// try anima without a Telegram token. Each line typed is a message from one local user;
// lines starting with "/" are commands.
package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels"
)

// Source is the offset source name of the console channel.
const Source = "console"

var _ channels.Channel = (*Channel)(nil)

// Options configure a console channel.
type Options struct {
	// Chat and User identify the local user (default 1).
	Chat, User int64
	Name       string
	// Prompt is the name printed before anima's messages (default "anima").
	Prompt string
	// Settle is how long, after input ends, the channel waits for replies to stop
	// arriving before Run returns (default 1s); Wait bounds the whole wait (default 2m).
	Settle, Wait time.Duration
	Clock        brain.Clock
}

// Channel reads lines from in and writes messages to out.
type Channel struct {
	in   io.Reader
	out  io.Writer
	rec  channels.Recorder
	sink channels.Sink
	opts Options

	mu        sync.Mutex
	lastSend  time.Time
	lastInput time.Time
	sent      chan struct{}
}

// New returns a console channel.
func New(in io.Reader, out io.Writer, rec channels.Recorder, sink channels.Sink, opts Options) *Channel {
	if opts.Chat == 0 {
		opts.Chat = 1
	}
	if opts.User == 0 {
		opts.User = opts.Chat
	}
	if opts.Prompt == "" {
		opts.Prompt = "anima"
	}
	if opts.Settle <= 0 {
		opts.Settle = time.Second
	}
	if opts.Wait <= 0 {
		opts.Wait = 2 * time.Minute
	}
	if opts.Clock == nil {
		opts.Clock = brain.RealClock{}
	}
	return &Channel{in: in, out: out, rec: rec, sink: sink, opts: opts, sent: make(chan struct{}, 1)}
}

// Run reads lines until input ends or ctx is done. When input ends it waits for the
// replies to the last lines (bounded by Options.Wait) and returns io.EOF so the caller
// can stop the service.
func (c *Channel) Run(ctx context.Context) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(c.in)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				return c.settle(ctx)
			}
			if err := c.handle(ctx, line); err != nil {
				return err
			}
		}
	}
}

func (c *Channel) handle(ctx context.Context, line string) error {
	text := strings.TrimSpace(line)
	if text == "" {
		return nil
	}
	now := c.opts.Clock.Now()
	typ := brain.SignalUserMessage
	if strings.HasPrefix(text, "/") {
		typ = brain.SignalCommand
	}
	sig := brain.Signal{Type: typ, Source: Source, Chat: c.opts.Chat, User: c.opts.User, UserName: c.opts.Name, Text: text, At: now, Received: now}
	recorded, err := c.rec.Record(Source, []brain.Signal{sig}, 0)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	c.mu.Lock()
	c.lastInput = now
	c.mu.Unlock()
	return c.sink.Submit(ctx, recorded...)
}

// settle waits until a reply has come after the last input and then nothing for Settle.
func (c *Channel) settle(ctx context.Context) error {
	deadline := time.NewTimer(c.opts.Wait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		answered := !c.lastSend.IsZero() && !c.lastSend.Before(c.lastInput)
		c.mu.Unlock()
		wait := c.opts.Settle
		if !answered {
			wait = c.opts.Wait
		}
		quiet := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			quiet.Stop()
			return nil
		case <-deadline.C:
			quiet.Stop()
			return io.EOF
		case <-c.sent:
			quiet.Stop()
		case <-quiet.C:
			if answered {
				return io.EOF
			}
		}
	}
}

// Send prints a message.
func (c *Channel) Send(_ context.Context, m brain.SendMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	text := m.Text
	for _, row := range m.Buttons {
		for _, b := range row {
			text += fmt.Sprintf("\n  [%s] → type %s", b.Text, b.Data)
		}
	}
	if _, err := fmt.Fprintf(c.out, "%s: %s\n", c.opts.Prompt, text); err != nil {
		return fmt.Errorf("console: write: %w", err)
	}
	c.lastSend = c.opts.Clock.Now()
	select {
	case c.sent <- struct{}{}:
	default:
	}
	return nil
}
