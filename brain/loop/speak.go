package loop

import (
	"context"
	"errors"

	"github.com/anima-bot/anima/brain"
)

// speak voices the turn's replies that are to be spoken (brain.Speaks: the voice mode,
// the chat's and the person's choice, whether the run was woken by their voice note)
// before the turn is committed, so that the audio is written with its outbox entry and a
// crash before delivery neither loses nor repeats it. A reply that is not spoken — refused
// (too long, a limit), failed, or the endpoint cannot speak — goes as text, as it is.
func (l *Loop) speak(ctx context.Context, rec *brain.TurnRecord, w brain.Wake) {
	if l.deps.Speaker == nil || len(rec.Outbox) == 0 {
		return
	}
	if !brain.Speaks(l.cfg.Voice, w.Rel, w.User, brain.ByVoice(w.Signals, w.User)) {
		return
	}
	for i := range rec.Outbox {
		m := &rec.Outbox[i]
		if m.Kind == brain.KindSystem || m.Plain || m.Voice != nil {
			continue
		}
		v, err := l.deps.Speaker.Speak(ctx, w.User, m.Text)
		switch {
		case err == nil:
			m.Voice = &v
		case ctx.Err() != nil:
			return
		case errors.Is(err, brain.ErrSpeechRefused):
			l.log.Info("reply not spoken; it goes as text", "chat", w.Chat, "reason", err.Error())
		case errors.Is(err, brain.ErrSpeechUnsupported):
			l.log.Debug("the endpoint cannot speak; the reply goes as text", "chat", w.Chat)
		default:
			l.log.Warn("speaking the reply failed; it goes as text", "chat", w.Chat, "err", err)
		}
	}
}
