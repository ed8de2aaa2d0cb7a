package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
)

// DeadKeep is how long a dead letter is kept.
const DeadKeep = 7 * 24 * time.Hour

// The default caps on the dead letters kept (Options.DeadPerUser, Options.DeadPerChat): a
// model refusing every run buries one letter per message, up to thousands a day.
const (
	DeadPerUser = 50
	DeadPerChat = 50
)

// DeadReasonMax is how many bytes of a dead letter's reason are kept (a provider's error
// can carry a whole response body); a longer one is cut at a rune boundary and ends with
// deadCutMark. The message or signals, which a retry sends or runs again, are kept whole.
const DeadReasonMax = 4096

// deadCutMark ends a reason cut to DeadReasonMax.
const deadCutMark = " …[cut]"

// ErrNoDeadLetter is returned for a dead-letter id the store does not hold (never buried,
// retried, pruned or forgotten).
var ErrNoDeadLetter = errors.New("no such dead letter")

var _ brain.DeadLetters = (*Store)(nil)

// Dead letters are keyed chat | user | id (8 bytes each, big-endian): a chat's /forget
// deletes them with the chat's prefix, and ForgetUser finds a user's in other chats by
// the key alone. The bucket holds a week of failures, so the lookups by id scan it.
func deadKey(d brain.DeadLetter) []byte {
	return brain.Key(d.Chat, brain.ID64(d.User), brain.U64(d.ID))
}

// Bury keeps d, with a fresh id, for DeadKeep, its reason cut to DeadReasonMax. Past the
// caps (Options.DeadPerUser for d's user in every chat, Options.DeadPerChat for d's
// chat) it deletes the oldest letters, d being the newest, and returns how many.
func (s *Store) Bury(d brain.DeadLetter) (dropped int, err error) {
	d.Reason = cutReason(d.Reason)
	err = s.Update(func(tx *Tx) error {
		dropped = 0
		id, err := tx.NextSeq(BucketDead)
		if err != nil {
			return err
		}
		d.ID = id
		if err := tx.Put(BucketDead, deadKey(d), d); err != nil {
			return err
		}
		dropped, err = s.capDead(tx, d.Chat, d.User)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("keep %s dead letter of chat %d: %w", d.Kind, d.Chat, err)
	}
	return dropped, nil
}

// capDead deletes the oldest dead letters of chat past s.deadPerChat and of user (0:
// none) past s.deadPerUser, and returns how many it deleted. Keys alone tell: chat |
// user | id, ids growing with time.
func (s *Store) capDead(tx *Tx, chat, user int64) (int, error) {
	var inChat, ofUser [][]byte
	err := tx.Scan(BucketDead, nil, func(k, _ []byte) error {
		if len(k) != 24 {
			return nil
		}
		if int64(binary.BigEndian.Uint64(k[:8])) == chat {
			inChat = append(inChat, bytes.Clone(k))
		}
		if user != 0 && int64(binary.BigEndian.Uint64(k[8:16])) == user {
			ofUser = append(ofUser, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	drop := map[string]bool{}
	for _, c := range []struct {
		keys [][]byte
		max  int
	}{{inChat, s.deadPerChat}, {ofUser, s.deadPerUser}} {
		if len(c.keys) <= c.max {
			continue
		}
		slices.SortFunc(c.keys, func(a, b []byte) int { return bytes.Compare(a[16:], b[16:]) })
		for _, k := range c.keys[:len(c.keys)-c.max] {
			drop[string(k)] = true
		}
	}
	for k := range drop {
		if err := tx.Delete(BucketDead, []byte(k)); err != nil {
			return 0, err
		}
	}
	return len(drop), nil
}

// cutReason returns reason cut to DeadReasonMax bytes (with deadCutMark, at a rune
// boundary).
func cutReason(reason string) string {
	if len(reason) <= DeadReasonMax {
		return reason
	}
	cut := DeadReasonMax - len(deadCutMark)
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut] + deadCutMark
}

// DeadLetters returns the dead letters kept, oldest first.
func (s *Store) DeadLetters() ([]brain.DeadLetter, error) {
	out, err := viewAll[brain.DeadLetter](s, BucketDead, "dead letter")
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	slices.SortFunc(out, func(a, b brain.DeadLetter) int { return cmpU64(a.ID, b.ID) })
	return out, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DeadLetter returns the dead letter id, or an error wrapping ErrNoDeadLetter.
func (s *Store) DeadLetter(id uint64) (brain.DeadLetter, error) {
	var d brain.DeadLetter
	err := s.View(func(tx *Tx) error {
		_, err := findDead(tx, id, &d)
		return err
	})
	if err != nil {
		return brain.DeadLetter{}, fmt.Errorf("dead letter %d: %w", id, err)
	}
	return d, nil
}

// findDead decodes the dead letter id into d and returns its key.
func findDead(tx *Tx, id uint64, d *brain.DeadLetter) ([]byte, error) {
	var key []byte
	want := brain.U64(id)
	err := tx.Scan(BucketDead, nil, func(k, v []byte) error {
		if len(k) != 24 || !bytes.Equal(k[16:], want) {
			return nil
		}
		if err := json.Unmarshal(v, d); err != nil {
			return fmt.Errorf("decode dead letter: %w", err)
		}
		key = bytes.Clone(k)
		return brain.ErrStop
	})
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, ErrNoDeadLetter
	}
	return key, nil
}

// Revival is what retrying a dead letter put back: the outbox entry of a refused message,
// or the recorded signals of a failed or expired run (a run answers them again).
type Revival struct {
	Letter brain.DeadLetter
	Outbox []brain.Outgoing
	Inbox  []brain.Signal
}

// Revive retries the dead letter id, in one transaction: it is deleted and its message
// goes back into the outbox (DeadUndeliverable, to be sent again from the first part
// never delivered: SendMessage.SkipParts is kept), or its signals into the
// inbox with fresh ids (DeadRunFailed, DeadHoldExpired), stamped at now so the hold limit
// counts from the retry. The caller hands them to the running loop; a stopped service
// finds them at its next start. Errors wrap ErrNoDeadLetter for an unknown id.
func (s *Store) Revive(id uint64, now time.Time) (Revival, error) {
	var rv Revival
	err := s.Update(func(tx *Tx) error {
		rv = Revival{}
		key, err := findDead(tx, id, &rv.Letter)
		if err != nil {
			return err
		}
		if err := tx.Delete(BucketDead, key); err != nil {
			return err
		}
		d := rv.Letter
		switch {
		case d.Message != nil:
			oid, err := tx.NextSeq(BucketOutbox)
			if err != nil {
				return err
			}
			msg := *d.Message
			msg.Arrived = time.Time{}
			e := brain.Outgoing{ID: oid, Msg: msg, Created: now, User: d.User}
			rv.Outbox = append(rv.Outbox, e)
			return tx.Put(BucketOutbox, brain.U64(oid), e)
		case len(d.Signals) > 0:
			for _, sig := range d.Signals {
				sid, err := tx.NextSeq(BucketInbox)
				if err != nil {
					return err
				}
				sig.ID, sig.At, sig.Received = sid, now, now
				if err := tx.Put(BucketInbox, brain.U64(sid), sig); err != nil {
					return err
				}
				rv.Inbox = append(rv.Inbox, sig)
			}
			return nil
		}
		return fmt.Errorf("dead letter %d has nothing to retry", id)
	})
	if err != nil {
		return Revival{}, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	return rv, nil
}

// PruneDead deletes the dead letters buried before now − DeadKeep and returns how many.
// It writes only when there is something to delete.
func (s *Store) PruneDead(now time.Time) (int, error) {
	cut := now.Add(-DeadKeep)
	var old [][]byte
	scan := func(tx *Tx) error {
		old = old[:0]
		return tx.Scan(BucketDead, nil, func(k, v []byte) error {
			var d struct {
				At time.Time `json:"at"`
			}
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("decode dead letter: %w", err)
			}
			if d.At.Before(cut) {
				old = append(old, bytes.Clone(k))
			}
			return nil
		})
	}
	if err := s.View(scan); err != nil {
		return 0, fmt.Errorf("prune dead letters: %w", err)
	}
	if len(old) == 0 {
		return 0, nil
	}
	err := s.Update(func(tx *Tx) error {
		if err := scan(tx); err != nil {
			return err
		}
		for _, k := range old {
			if err := tx.Delete(BucketDead, k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune dead letters: %w", err)
	}
	return len(old), nil
}

// forgetDeadUser deletes user's dead letters in every chat (their private chat's go with
// the chat's prefix), by key alone.
func forgetDeadUser(tx *Tx, user int64) (int, error) {
	return deleteWhere(tx, BucketDead, func(k, _ []byte) bool {
		return len(k) == 24 && int64(binary.BigEndian.Uint64(k[8:16])) == user
	})
}
