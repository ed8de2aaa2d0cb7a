package memory

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/anima-bot/anima/brain"
)

// The notes of how they are (brain.StateNote) live in a bucket of memory's own, which
// the store knows only by name: memory creates it (New) and erases a user's notes in
// their /forget's transaction (ForgetHowTheyAreTx).

// BucketHowTheyAre holds the notes of how people are: key chat | user (8-byte big-endian
// ids; a private chat's note has chat = user, a group's one note per member), value the
// note's lines as JSON ([]brain.StateLine, oldest first).
const BucketHowTheyAre = "how_they_are"

// maxNoteMembers bounds the notes a group's Recall carries: the wake's member and the
// last members to write in the recalled turns.
const maxNoteMembers = 4

// stateKey is the key of the note of how user is in chat.
func stateKey(chat, user int64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(chat))
	return binary.BigEndian.AppendUint64(k, uint64(user))
}

// bucketMaker is a Tx that creates a bucket that is not there yet (*storage.Tx; the
// tests' storagetest.Tx makes them on first write).
type bucketMaker interface {
	EnsureBucket(name string) error
}

// ensureBuckets creates memory's own buckets when the store needs it.
func ensureBuckets(st txns) error {
	return st.Update(func(tx Tx) error {
		if b, ok := tx.(bucketMaker); ok {
			return b.EnsureBucket(BucketHowTheyAre)
		}
		return nil
	})
}

func loadState(tx Tx, chat, user int64) ([]brain.StateLine, error) {
	var lines []brain.StateLine
	if _, err := tx.Get(BucketHowTheyAre, stateKey(chat, user), &lines); err != nil {
		return nil, fmt.Errorf("read how user %d is in chat %d: %w", user, chat, err)
	}
	return lines, nil
}

// NoteStateTx adds text as a line of the note of how user is in chat, dated at, inside
// the caller's transaction (the turn's: storage.Commit.Also), by brain.AddStateLine's rule:
// faded lines dropped, all earlier ones when replace, at most brain.StateLines kept. A
// note left empty is deleted. user 0 writes nothing.
func (m *Memory) NoteStateTx(tx Tx, chat, user int64, text string, replace bool, at time.Time) error {
	if user == 0 {
		return nil
	}
	old, err := loadState(tx, chat, user)
	if err != nil {
		return err
	}
	lines := brain.AddStateLine(old, text, at, replace)
	if len(lines) == 0 {
		err = tx.Delete(BucketHowTheyAre, stateKey(chat, user))
	} else {
		err = tx.Put(BucketHowTheyAre, stateKey(chat, user), lines)
	}
	if err != nil {
		return fmt.Errorf("note how user %d is in chat %d: %w", user, chat, err)
	}
	return nil
}

// HowTheyAre returns the fresh lines (brain.FreshLines at the memory's clock) of the note
// of how user is in chat, oldest first; nil without one.
func (m *Memory) HowTheyAre(chat, user int64) ([]brain.StateLine, error) {
	lines, err := viewed(m.st, func(tx Tx) ([]brain.StateLine, error) { return loadState(tx, chat, user) })
	if err != nil {
		return nil, err
	}
	return brain.FreshLines(lines, m.clock.Now()), nil
}

// HowTheyAreInGroups returns the fresh notes of how user is in the groups they share with
// anima (not their private chat's), each with its group's chat id in User's place — for
// /thoughts in the private chat, since a group never hears one member's note read out.
func (m *Memory) HowTheyAreInGroups(user int64) ([]brain.StateNote, error) {
	now := m.clock.Now()
	return viewed(m.st, func(tx Tx) ([]brain.StateNote, error) {
		var out []brain.StateNote
		err := tx.Scan(BucketHowTheyAre, nil, func(k, v []byte) error {
			if len(k) != 16 || int64(binary.BigEndian.Uint64(k[8:])) != user {
				return nil
			}
			chat := int64(binary.BigEndian.Uint64(k[:8]))
			if chat == user {
				return nil
			}
			lines, err := loadState(tx, chat, user)
			if err != nil {
				return err
			}
			if lines = brain.FreshLines(lines, now); len(lines) > 0 {
				out = append(out, brain.StateNote{User: chat, Lines: lines})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the group notes of how user %d is: %w", user, err)
		}
		return out, nil
	})
}

// recallStates reads the notes a Recall carries: in a private chat the user's; in a group
// the wake's member's and those of the last other members to write in turns, at most
// maxNoteMembers, each named from their turns. A note without fresh lines is left out.
func recallStates(tx Tx, chat, user int64, turns []brain.Turn, now time.Time) ([]brain.StateNote, error) {
	type member struct {
		id   int64
		name string
	}
	var who []member
	seen := map[int64]int{}
	add := func(id int64, name string) {
		if id == 0 {
			return
		}
		if i, ok := seen[id]; ok {
			if who[i].name == "" {
				who[i].name = name
			}
			return
		}
		if len(who) < maxNoteMembers {
			seen[id] = len(who)
			who = append(who, member{id, name})
		}
	}
	add(user, "")
	if chat != user {
		for i := len(turns) - 1; i >= 0; i-- {
			if t := turns[i]; t.Role == "user" {
				add(t.User, t.Name)
			}
		}
	}
	var notes []brain.StateNote
	for _, mb := range who {
		lines, err := loadState(tx, chat, mb.id)
		if err != nil {
			return nil, err
		}
		if lines = brain.FreshLines(lines, now); len(lines) > 0 {
			notes = append(notes, brain.StateNote{User: mb.id, Name: mb.name, Lines: lines})
		}
	}
	return notes, nil
}

// ForgetHowTheyAreTx deletes, inside tx (the transaction of the user's /forget), every note of
// how user is: their private chat's and, in every group, theirs alone. It returns the
// chats it deleted a note in.
func (m *Memory) ForgetHowTheyAreTx(tx Tx, user int64) ([]int64, error) {
	var keys [][]byte
	err := tx.Scan(BucketHowTheyAre, nil, func(k, _ []byte) error {
		if len(k) == 16 && int64(binary.BigEndian.Uint64(k[8:])) == user {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find the notes of how user %d is: %w", user, err)
	}
	chats := make([]int64, 0, len(keys))
	for _, k := range keys {
		if err := tx.Delete(BucketHowTheyAre, k); err != nil {
			return nil, fmt.Errorf("forget how user %d is: %w", user, err)
		}
		chats = append(chats, int64(binary.BigEndian.Uint64(k[:8])))
	}
	return chats, nil
}
