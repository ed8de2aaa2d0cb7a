package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
)

// ForgetReport says what ForgetUser removed from the chats other than the user's private
// chat (which goes entirely).
type ForgetReport struct {
	// Chats are the other chats (groups) the user had data in, ascending.
	Chats     []int64
	Turns     int // the user's messages and the answers to them
	Reminders int
	Facts     int
	// DeadLetters are the user's dead letters in other chats.
	DeadLetters int
	// Erased is set when anything was deleted: the deleted bytes are still in the file
	// until the store is compacted, and the store records that an erasure is pending
	// (ErasurePending) in the same commit.
	Erased bool
}

// groupHistoryEach calls fn with the history entries of every group chat, epoch by
// epoch. Outside their private chat a user's turns can only be in groups, whose ids are
// negative, and ids are keyed as uint64, so groups sort after every private chat: the
// walk skips the private chats, which on a store with years of conversations is nearly
// all of it (a /forget on a 52 MB store walked and decoded every turn, about a second of
// the store's one writer each time).
func (t *Tx) groupHistoryEach(fn func(k, v []byte) error) error {
	groups := brain.ID64(math.MinInt64)
	return t.walkEpochs(t.epochs(), false, func(b *bolt.Bucket) error { return scanFrom(b, nil, groups, fn) })
}

// Unindexer removes turns of chat, by their history Seq, from a search index inside tx
// (memory's index lives in this store but only memory knows its layout).
type Unindexer func(tx *Tx, chat int64, seqs []uint64) error

// ForgetUser deletes, in one transaction, everything stored about user: their private
// chat (chat id = user id) entirely, as Forget does; and in every other chat their turns
// (the messages they wrote and the answers to them), those turns' entries in the search
// index (through unindex, when not nil), their reminders and follow-ups with their fire
// records, their facts, their dead letters and the outbox's answers to them (spoken ones'
// audio too). Of the inbox go their reactions and due reminders, and their messages not
// yet answered in other chats (forgetInboxUser). Other members' data
// stays, and so do a group's summaries and turns stored before turns recorded their
// sender. From then on Record takes no reaction to a message of the private chat sent
// before (see Record). Each of erase deletes, in the same transaction, what an engine
// keeps of the user in a bucket of its own.
func (s *Store) ForgetUser(user int64, unindex Unindexer, erase ...UserEraser) (ForgetReport, error) {
	var rep ForgetReport
	err := s.Update(func(tx *Tx) error {
		rep = ForgetReport{}
		if err := forgetChatTx(tx, user); err != nil {
			return err
		}
		chats := map[int64]bool{}
		var err error
		if rep.Turns, err = forgetGroupTurns(tx, user, unindex, chats); err != nil {
			return err
		}
		if rep.Reminders, err = forgetSchedulesUser(tx, user, chats); err != nil {
			return err
		}
		// Facts: chat | user | attribute.
		rep.Facts, err = deleteWhere(tx, brain.BucketFacts, func(k, _ []byte) bool {
			if len(k) < 16 || int64(binary.BigEndian.Uint64(k[8:16])) != user {
				return false
			}
			chats[int64(binary.BigEndian.Uint64(k[:8]))] = true
			return true
		})
		if err != nil {
			return err
		}
		// Dead letters: chat | user | id.
		if rep.DeadLetters, err = forgetDeadUser(tx, user); err != nil {
			return err
		}
		// The inbox's entries that carry what was before, and the outbox's answers to the
		// user's turns in groups (their private chat's went above).
		if err := forgetInboxUser(tx, user); err != nil {
			return err
		}
		if err := forgetOutboxUser(tx, user); err != nil {
			return err
		}
		if err := eraseUser(tx, user, erase, chats); err != nil {
			return err
		}
		// The private chat's sent ids waiting for a commit go with the stored ones
		// (forgetChatTx): written back by a later commit, they let a reaction to a message
		// from before the forget through, quoting it. Cleared inside the transaction, no
		// commit can be carrying them meanwhile.
		s.forgetSent(user)
		rep.Chats = slices.Sorted(maps.Keys(chats))
		if tx.deleted > 0 {
			rep.Erased = true
			return tx.MarkErasure()
		}
		return nil
	})
	if err != nil {
		return ForgetReport{}, fmt.Errorf("forget user %d: %w", user, err)
	}
	return rep, nil
}

// forgetGroupTurns deletes, in tx, user's turns in groups and (through unindex, when not
// nil) their entries in the search index, adds their chats to chats and returns how many
// turns went.
func forgetGroupTurns(tx *Tx, user int64, unindex Unindexer, chats map[int64]bool) (int, error) {
	seqs := map[int64][]uint64{}
	var keys [][]byte
	err := tx.groupHistoryEach(func(k, v []byte) error {
		if len(k) != 16 {
			return nil
		}
		var t brain.Turn
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("decode history entry: %w", err)
		}
		if t.User != user {
			return nil
		}
		chat := int64(binary.BigEndian.Uint64(k[:8]))
		seqs[chat] = append(seqs[chat], binary.BigEndian.Uint64(k[8:]))
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := tx.HistoryDelete(int64(binary.BigEndian.Uint64(k[:8])), brain.HistorySeq(k)); err != nil {
			return 0, err
		}
	}
	for chat, ss := range seqs {
		chats[chat] = true
		if unindex != nil {
			if err := unindex(tx, chat, ss); err != nil {
				return 0, fmt.Errorf("unindex turns of chat %d: %w", chat, err)
			}
		}
	}
	return len(keys), nil
}

// forgetSchedulesUser deletes, in tx, user's schedule items and their fire records, adds
// their chats to chats and returns how many items went.
func forgetSchedulesUser(tx *Tx, user int64, chats map[int64]bool) (int, error) {
	all, err := decodeAll[brain.ScheduleItem](tx, brain.BucketSchedules, "schedule")
	if err != nil {
		return 0, err
	}
	items := slices.DeleteFunc(all, func(it brain.ScheduleItem) bool { return it.User != user })
	for _, it := range items {
		if err := tx.Delete(brain.BucketSchedules, brain.ScheduleKey(it.Chat, it.ID)); err != nil {
			return 0, err
		}
		if _, err := tx.DeletePrefix(brain.BucketFires, brain.ScheduleKey(it.Chat, it.ID)); err != nil {
			return 0, err
		}
		chats[it.Chat] = true
	}
	return len(items), nil
}

// Forget deletes everything stored about a chat: history, relationship, summaries,
// search index, schedules, facts, acks, dead letters and undelivered outbox entries. Inbox entries
// stay: they are messages that arrived after the user asked, and get answered.
func (s *Store) Forget(chat int64) error {
	s.forgetSent(chat) // not to be written back by the commit below
	return s.Update(func(tx *Tx) error { return forgetChatTx(tx, chat) })
}

// forgetInboxUser deletes from the inbox, in tx, the entries of user (theirs, or in their
// private chat) that carry data from before: reactions, which quote the message reacted
// to, and due reminders, which carry the reminder's note. Nothing would consume them: the
// loop forgets the chat's pending reactions, and a reminder's wake meets no reminder. Their
// messages in other chats (a group's, voice notes too) go as well: recorded and not yet
// answered, they would be answered after the erasure and their words stored again (the
// loop drops them from its queues too). The user's messages and commands in their private
// chat stay: the chat's queue runs them after the /forget, and they get answered (see
// Forget).
func forgetInboxUser(tx *Tx, user int64) error {
	_, err := deleteWhere(tx, BucketInbox, func(_, v []byte) bool {
		var sig brain.Signal
		if json.Unmarshal(v, &sig) != nil || (sig.Chat != user && sig.User != user) {
			return false
		}
		return sig.Type == brain.SignalReaction || sig.Type == brain.SignalScheduleDue ||
			sig.Type == brain.SignalUserMessage && sig.Chat != user
	})
	return err
}

// forgetOutboxUser deletes from the outbox, in tx, the answers to user's turns in other
// chats, with the audio of the spoken ones (deleteOutboxTx: a group's voice bucket is
// not the user's to clear by prefix).
func forgetOutboxUser(tx *Tx, user int64) error {
	var ids []uint64
	err := tx.Scan(BucketOutbox, nil, func(k, v []byte) error {
		var e brain.Outgoing
		if json.Unmarshal(v, &e) == nil && e.User == user {
			ids = append(ids, binary.BigEndian.Uint64(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := deleteOutboxTx(tx, id); err != nil {
			return err
		}
	}
	return nil
}

// forgetSent drops chat's sent ids waiting for a commit (RecordSent) and remembers that
// the chat was forgotten, so that Record checks its reactions against what is sent.
func (s *Store) forgetSent(chat int64) {
	s.sentMu.Lock()
	defer s.sentMu.Unlock()
	s.sentIDsN -= len(s.sentIDs[chat])
	delete(s.sentIDs, chat)
	s.forgotten[chat] = true
}

func forgetChatTx(tx *Tx, chat int64) error {
	for _, b := range chatScoped {
		if _, err := tx.DeletePrefix(b, brain.ID64(chat)); err != nil {
			return fmt.Errorf("forget %s: %w", b, err)
		}
	}
	if err := tx.deleteHistoryChat(chat); err != nil { // the epochs after the first
		return fmt.Errorf("forget history: %w", err)
	}
	suffix := ":" + strconv.FormatInt(chat, 10)
	if _, err := deleteWhere(tx, BucketAcks, func(k, _ []byte) bool { return bytes.HasSuffix(k, []byte(suffix)) }); err != nil {
		return err
	}
	_, err := deleteWhere(tx, BucketOutbox, func(_, v []byte) bool {
		var e brain.Outgoing
		return json.Unmarshal(v, &e) == nil && e.Msg.Chat == chat
	})
	return err
}

// deleteWhere deletes, in tx, bucket's entries that match and returns how many.
func deleteWhere(tx *Tx, bucket string, match func(k, v []byte) bool) (int, error) {
	var keys [][]byte
	if err := tx.Scan(bucket, nil, func(k, v []byte) error {
		if match(k, v) {
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := tx.Delete(bucket, k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}
