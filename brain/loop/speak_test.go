package loop_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// fakeSpeaker voices a text as its own bytes, or fails with err.
type fakeSpeaker struct {
	mu    sync.Mutex
	err   error
	texts []string
	users []int64
}

func (s *fakeSpeaker) Speak(_ context.Context, user int64, text string) (brain.Voice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, text)
	s.users = append(s.users, user)
	if s.err != nil {
		return brain.Voice{}, s.err
	}
	return brain.Voice{Audio: []byte("ogg:" + text), Duration: time.Second, Bytes: len(text) + 4}, nil
}

func (s *fakeSpeaker) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.texts)
}

func newSpeakHarness(t *testing.T, mode brain.VoiceMode, sp *fakeSpeaker) (*harness, *perceiver) {
	h := newHarness(t, noProactive())
	h.cfg.Voice = mode
	p := &perceiver{fakeThinker: h.think}
	h.build(thinking(p), func(d *loop.Deps) { d.Media, d.Speaker = nopFetcher{}, sp })
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) { return answer(w), nil }
	return h, p
}

// A reply is spoken before its turn is committed — the outbox entry carries the audio — when
// brain.Speaks says so; when speaking fails or is refused, the same reply goes as text.
func TestSpeakReplies(t *testing.T) {
	t.Parallel()
	voiceNote := func(h *harness) brain.Signal {
		sig := h.msg(1, 7, "")
		sig.Media = &brain.Media{Kind: brain.MediaVoice, FileID: "f", Duration: 5}
		return sig
	}
	text := func(h *harness) brain.Signal { return h.msg(1, 7, "hello") }
	for _, tc := range []struct {
		name    string
		mode    brain.VoiceMode
		in      func(*harness) brain.Signal
		err     error
		spoken  bool
		speaker int // Speak calls
	}{
		{"mirror answers a voice note with one", brain.VoiceMirror, voiceNote, nil, true, 1},
		{"mirror answers text with text", brain.VoiceMirror, text, nil, false, 0},
		{"always speaks to text", brain.VoiceAlways, text, nil, true, 1},
		{"off stays text", brain.VoiceOff, voiceNote, nil, false, 0},
		{"a failure sends the text", brain.VoiceMirror, voiceNote, errors.New("speak: 500"), false, 1},
		{"a refusal sends the text", brain.VoiceMirror, voiceNote, fmt.Errorf("%w: too long", brain.ErrSpeechRefused), false, 1},
		{"no speech sends the text", brain.VoiceMirror, voiceNote, brain.ErrSpeechUnsupported, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sp := &fakeSpeaker{err: tc.err}
			h, _ := newSpeakHarness(t, tc.mode, sp)
			h.start()
			h.submit(tc.in(h))
			m := recv(t, h.sender.attempts, "the answer")
			h.stop()
			if (m.Voice != nil) != tc.spoken {
				t.Fatalf("sent %+v; spoken %v", m, tc.spoken)
			}
			if tc.spoken && string(m.Voice.Audio) != "ogg:"+m.Text {
				t.Errorf("audio %q for text %q", m.Voice.Audio, m.Text)
			}
			if got := sp.calls(); got != tc.speaker {
				t.Errorf("Speak called %d times, want %d", got, tc.speaker)
			}
			recs := h.journal.Recs()
			if len(recs) != 1 || len(recs[0].Outbox) != 1 || (recs[0].Outbox[0].Voice != nil) != tc.spoken {
				t.Errorf("committed %+v; the voice must be in the turn's outbox", recs)
			}
			if n := len(h.sender.attempts); n != 0 {
				t.Errorf("%d more sends: the text must go once", n)
			}
		})
	}
}

// /voice's intent changes the chat's relationship: a person's own choice, or a group's
// switch.
func TestSetVoice(t *testing.T) {
	t.Parallel()
	sp := &fakeSpeaker{}
	h, _ := newSpeakHarness(t, brain.VoiceMirror, sp)
	h.cmds.intents = []brain.Intent{brain.SetVoice{Chat: 7, User: 7, Pref: brain.VoiceNo}}
	h.start()
	cmd := h.msg(1, 7, "/voice off")
	cmd.Type = brain.SignalCommand
	h.submit(cmd)
	recv(t, h.sender.attempts, "the command's answer")
	sig := h.msg(2, 7, "")
	sig.Media = &brain.Media{Kind: brain.MediaVoice, FileID: "f", Duration: 5}
	h.submit(sig)
	m := recv(t, h.sender.attempts, "the answer")
	h.stop()
	if m.Voice != nil || sp.calls() != 0 {
		t.Fatalf("answer spoken after /voice off: %+v", m)
	}
	if rel := h.st.Rel(7); rel == nil || rel.Voice[7] != brain.VoiceNo {
		t.Fatalf("relationship = %+v", rel)
	}
}
