package console_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/braintest"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/channelstest"
	"github.com/anima-bot/anima/channels/console"
)

// echoSink answers every submitted signal through the channel, as the core loop would.
type echoSink struct {
	ch  *console.Channel
	got chan brain.Signal
}

func (s *echoSink) Submit(ctx context.Context, sigs ...brain.Signal) error {
	for _, sig := range sigs {
		s.got <- sig
		m := brain.SendMessage{Chat: sig.Chat, Text: "re: " + sig.Text}
		if sig.Type == brain.SignalCommand {
			m.Buttons = [][]brain.Button{{{Text: "Yes", Data: "/forget yes"}}}
		}
		go func() { _ = s.ch.Send(ctx, m) }()
	}
	return nil
}

func TestLinesBecomeSignalsAndRepliesArePrinted(t *testing.T) {
	t.Parallel()
	rec := channelstest.NewRecorder(0)
	sink := &echoSink{got: make(chan brain.Signal, 8)}
	var out braintest.Buffer
	ch := console.New(strings.NewReader("hello there\n\n/forget\n"), &out, rec, sink,
		console.Options{Prompt: "Anima", Settle: 50 * time.Millisecond, Wait: 5 * time.Second})
	sink.ch = ch
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Run(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("Run = %v, want io.EOF once input ended and replies settled", err)
	}
	sigs, _ := rec.Snapshot()
	if len(sigs) != 2 {
		t.Fatalf("recorded %d signals, want 2 (the blank line is skipped)", len(sigs))
	}
	if s := sigs[0]; s.Type != brain.SignalUserMessage || s.Text != "hello there" || s.Chat != 1 || s.User != 1 || s.ID == 0 {
		t.Errorf("first signal = %+v", s)
	}
	if s := sigs[1]; s.Type != brain.SignalCommand || s.Text != "/forget" {
		t.Errorf("second signal = %+v, want the command", s)
	}
	for _, want := range []string{"Anima: re: hello there", "Anima: re: /forget", "[Yes] → type /forget yes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
