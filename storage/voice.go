package storage

import (
	"bytes"
	"encoding/json"

	"github.com/anima-bot/anima/brain"
)

// A spoken outbox entry's audio (brain.Voice.Audio) is kept as a blob in BucketVoice,
// keyed by its chat and the entry's id, beside the entry and written in the same
// transaction; it goes when the entry goes (delivered: deleteOutboxTx; forgotten: Forget,
// as BucketVoice is chat-scoped). The entry itself stays small, so scanning the outbox
// copies no audio.

// voiceKey is where the audio of outbox entry id of chat is kept.
func voiceKey(chat int64, id uint64) []byte { return brain.Key(chat, brain.U64(id)) }

// putVoice keeps the audio of outbox entry id, if m is spoken.
func putVoice(tx *Tx, id uint64, m brain.SendMessage) error {
	if m.Voice == nil || len(m.Voice.Audio) == 0 {
		return nil
	}
	return tx.PutBlob(BucketVoice, voiceKey(m.Chat, id), m.Voice.Audio)
}

// loadVoice gives a spoken entry read from the outbox its audio; an entry whose audio is
// gone (a revived dead letter) is sent as text.
func loadVoice(tx *Tx, e *brain.Outgoing) error {
	if e.Msg.Voice == nil {
		return nil
	}
	audio, err := tx.PeekBlob(BucketVoice, voiceKey(e.Msg.Chat, e.ID))
	if err != nil {
		return err
	}
	if len(audio) == 0 {
		e.Msg.Voice = nil
		return nil
	}
	v := *e.Msg.Voice
	v.Audio = bytes.Clone(audio) // the blob's bytes die with tx
	e.Msg.Voice = &v
	return nil
}

// voiceMark is in the JSON of a spoken entry (brain.SendMessage's voice field): only such
// an entry is decoded to find its audio when it is deleted.
var voiceMark = []byte(`"voice":{`)

// deleteOutboxTx removes outbox entry id and the audio kept for it.
func deleteOutboxTx(tx *Tx, id uint64) error {
	v, err := tx.Peek(BucketOutbox, brain.U64(id))
	if err != nil {
		return err
	}
	if bytes.Contains(v, voiceMark) {
		var e struct {
			Msg struct {
				Chat  int64            `json:"chat"`
				Voice *json.RawMessage `json:"voice"`
			} `json:"msg"`
		}
		if json.Unmarshal(v, &e) == nil && e.Msg.Voice != nil {
			if err := tx.DeleteBlob(BucketVoice, voiceKey(e.Msg.Chat, id)); err != nil {
				return err
			}
		}
	}
	return tx.Delete(BucketOutbox, brain.U64(id))
}
