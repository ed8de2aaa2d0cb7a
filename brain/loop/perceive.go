package loop

import (
	"context"

	"github.com/anima-bot/anima/brain"
)

// perceive reads the media of w's user messages when cognition can (a Perceiver):
// downloads and transcriptions happen here, off the tick.
func (l *Loop) perceive(ctx context.Context, w brain.Wake) brain.Wake {
	if p, ok := l.deps.Thinker.(brain.Perceiver); ok && brain.HasMedia(w.Signals) {
		return p.Perceive(ctx, w, l.deps.Media)
	}
	return w
}

// forModel is the wake cognition sees: w without the user messages whose media could not
// be read (they are answered by their notice alone, and still recorded). skip says nothing
// is left to think about: every user message of the wake was such a one.
func forModel(w brain.Wake) (mw brain.Wake, notices []brain.SendMessage, skip bool) {
	users, noticed := 0, 0
	for _, s := range w.Signals {
		if s.Type != brain.SignalUserMessage {
			continue
		}
		users++
		if s.Media != nil && s.Media.Notice != "" {
			noticed++
			notices = append(notices, brain.SendMessage{Chat: w.Chat, Text: s.Media.Notice, Kind: brain.KindSystem, ReplyTo: s.MessageID, Plain: true})
		}
	}
	if noticed == 0 {
		return w, nil, false
	}
	mw = w
	mw.Signals = make([]brain.Signal, 0, len(w.Signals)-noticed)
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage && s.Media != nil && s.Media.Notice != "" {
			continue
		}
		mw.Signals = append(mw.Signals, s)
	}
	return mw, notices, noticed == users
}
