package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

// MaxCaptionLength is Telegram's limit on a caption, in UTF-16 code units after entity
// parsing.
const MaxCaptionLength = 1024

// sendVoice is Send for a spoken message (m.Voice with its audio): the voice note
// (sendVoice, the Ogg/Opus uploaded with its duration) is its part 0, with the text as its
// caption when the text fits in one; otherwise the text follows as a message of its own,
// its parts counted after the note's. A note Telegram refuses for good (400, e.g. the
// person allows no voice messages) is replaced by the text, once. Errors: as Send's; a
// failure after the note went out is a *brain.PartialSendError.
func (c *Channel) sendVoice(ctx context.Context, m brain.SendMessage) error {
	caption, mode := voiceCaption(m)
	fits := caption != "" || m.Text == ""
	sentNote := 0
	if m.SkipParts <= 0 {
		err := c.sendNote(ctx, m, caption, mode, fits)
		if errors.Is(err, errParse) {
			c.log.Warn("telegram could not parse the voice note's caption, resending it as plain text")
			plain, _ := voiceCaption(brain.SendMessage{Text: m.Text, Plain: true})
			err = c.sendNote(ctx, m, plain, "", fits)
		}
		switch {
		case errors.Is(err, brain.ErrUndeliverable):
			c.log.Warn("telegram refused the voice note; sending the text instead", "err", err)
			text := m
			text.Voice = nil
			return c.sendText(ctx, text)
		case err != nil:
			return fmt.Errorf("telegram send voice note: %w", err)
		case fits:
			return nil
		}
		sentNote = 1
	}
	rest := m
	rest.Voice, rest.SkipParts = nil, max(m.SkipParts-1, 0)
	rest.ReplyTo = 0 // the note answered it
	err := c.sendText(ctx, rest)
	if err == nil || errors.Is(err, brain.ErrBlocked) {
		return err
	}
	// The note is part 0, delivered now or by an earlier try; the text parts delivered
	// are counted from the text's first, those an earlier try delivered included (as
	// PartialSendError counts them), so Sent counts m's parts from its first.
	text := rest.SkipParts
	var partial *brain.PartialSendError
	if errors.As(err, &partial) {
		text = partial.Sent
	}
	if sentNote == 0 && text <= rest.SkipParts {
		return err // nothing went out in this try
	}
	return &brain.PartialSendError{Sent: 1 + text, Err: err}
}

// voiceCaption is m's text as a voice note's caption and its parse mode, or "" when it
// does not fit in MaxCaptionLength.
func voiceCaption(m brain.SendMessage) (caption string, mode models.ParseMode) {
	if m.Plain {
		if utf16Len(m.Text) > MaxCaptionLength {
			return "", ""
		}
		return m.Text, ""
	}
	h := ToHTML(m.Text)
	if utf16Len(stripTags(h)) > MaxCaptionLength {
		return "", ""
	}
	return h, models.ParseModeHTML
}

// sendNote sends m's voice note with caption; last says nothing follows it (it carries
// the buttons).
func (c *Channel) sendNote(ctx context.Context, m brain.SendMessage, caption string, mode models.ParseMode, last bool) error {
	v := m.Voice
	seconds := int((v.Duration + time.Second - 1) / time.Second)
	return c.call(ctx, m, func(rctx context.Context) (*models.Message, error) {
		params := &bot.SendVoiceParams{
			ChatID:   m.Chat,
			Voice:    &models.InputFileUpload{Filename: "voice.ogg", Data: bytes.NewReader(v.Audio)},
			Duration: seconds,
			Caption:  caption, ParseMode: mode,
		}
		if m.ReplyTo != 0 {
			params.ReplyParameters = &models.ReplyParameters{MessageID: m.ReplyTo, AllowSendingWithoutReply: true}
		}
		if last && len(m.Buttons) > 0 {
			params.ReplyMarkup = keyboard(m.Buttons)
		}
		return c.bot.SendVoice(rctx, params)
	})
}
