package storage_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// buryAll keeps the letters and returns their ids in the order given.
func buryAll(t *testing.T, s *storage.Store, letters ...brain.DeadLetter) []uint64 {
	t.Helper()
	for _, d := range letters {
		if err := s.Bury(d); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.DeadLetters()
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, d := range all[len(all)-len(letters):] {
		ids = append(ids, d.ID)
	}
	return ids
}

func deadIDs(t *testing.T, s *storage.Store) []uint64 {
	t.Helper()
	all, err := s.DeadLetters()
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, d := range all {
		ids = append(ids, d.ID)
	}
	return ids
}

// TestDeadLetters: buried letters are listed oldest first whatever their chat, shown
// whole by id; an unknown id is ErrNoDeadLetter.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "anima.db"))
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	msg := brain.SendMessage{Chat: 9, Text: "refused words", Kind: brain.KindReply}
	ids := buryAll(t, s,
		brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: 9, User: 9, At: at, Reason: "400 bad request", Message: &msg},
		brain.DeadLetter{Kind: brain.DeadRunFailed, Chat: -5, User: 3, At: at, Reason: "model said no",
			Signals: []brain.Signal{{ID: 4, Type: brain.SignalUserMessage, Chat: -5, User: 3, Text: "hello"}}},
		brain.DeadLetter{Kind: brain.DeadHoldExpired, Chat: 1, User: 1, At: at, Reason: "held too long",
			Signals: []brain.Signal{{ID: 5, Type: brain.SignalUserMessage, Chat: 1, User: 1, Text: "are you there"}}},
	)
	if want := []uint64{1, 2, 3}; !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v (oldest first, across chats)", ids, want)
	}
	d, err := s.DeadLetter(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != brain.DeadUndeliverable || d.Reason != "400 bad request" || d.Message == nil || d.Message.Text != "refused words" || !d.At.Equal(at) {
		t.Errorf("dead letter %d = %+v, want the refused message whole", ids[0], d)
	}
	if _, err := s.DeadLetter(99); !errors.Is(err, storage.ErrNoDeadLetter) {
		t.Errorf("unknown id: err %v, want ErrNoDeadLetter", err)
	}
}

// TestReviveDeadLetter: a refused message goes back into the outbox; a failed run's
// signals go back into the inbox with fresh ids, stamped at the retry; either way the
// letter is gone, and a second retry finds nothing.
func TestReviveDeadLetter(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "anima.db"))
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := at.Add(3 * 24 * time.Hour)
	msg := brain.SendMessage{Chat: 9, Text: "try me again", Kind: brain.KindReply, SkipParts: 1}
	sig := brain.Signal{ID: 4, Type: brain.SignalUserMessage, Chat: 1, User: 1, Text: "hello", At: at}
	ids := buryAll(t, s,
		brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: 9, User: 9, At: at, Message: &msg},
		brain.DeadLetter{Kind: brain.DeadHoldExpired, Chat: 1, User: 1, At: at, Signals: []brain.Signal{sig}},
	)

	rv, err := s.Revive(ids[0], now)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.PendingOutbox()
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Msg.Text != "try me again" || out[0].Msg.SkipParts != 0 || out[0].User != 9 || len(rv.Outbox) != 1 || rv.Outbox[0].ID != out[0].ID {
		t.Errorf("outbox after retry %+v (revival %+v), want the message once, from its first part", out, rv.Outbox)
	}

	rv, err = s.Revive(ids[1], now)
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 1 || in[0].Text != "hello" || in[0].ID == 0 || !in[0].At.Equal(now) || len(rv.Inbox) != 1 || rv.Inbox[0].ID != in[0].ID {
		t.Errorf("inbox after retry %+v (revival %+v), want the message recorded anew at %v", in, rv.Inbox, now)
	}
	if ids := deadIDs(t, s); len(ids) != 0 {
		t.Errorf("dead letters %v left after retrying both", ids)
	}
	if _, err := s.Revive(ids[1], now); !errors.Is(err, storage.ErrNoDeadLetter) {
		t.Errorf("second retry: err %v, want ErrNoDeadLetter", err)
	}
}

// TestPruneDeadLetters: letters older than DeadKeep go, younger ones stay.
func TestPruneDeadLetters(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "anima.db"))
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	msg := brain.SendMessage{Chat: 9, Text: "x"}
	ids := buryAll(t, s,
		brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: 9, At: now.Add(-storage.DeadKeep - time.Minute), Message: &msg},
		brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: 9, At: now.Add(-storage.DeadKeep + time.Minute), Message: &msg},
	)
	n, err := s.PruneDead(now)
	if err != nil {
		t.Fatal(err)
	}
	if got := deadIDs(t, s); n != 1 || !slices.Equal(got, ids[1:]) {
		t.Errorf("pruned %d, left %v; want 1 pruned and %v left", n, got, ids[1:])
	}
	if n, err := s.PruneDead(now); err != nil || n != 0 {
		t.Errorf("second prune: %d, %v; want nothing", n, err)
	}
}

// TestForgetDeadLetters: a chat's /forget deletes its dead letters; ForgetUser deletes the
// user's in their private chat and in groups, and keeps other members'.
func TestForgetDeadLetters(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "anima.db"))
	const ann, ben, grp, other = 1, 2, -100, -200
	at := time.Now()
	letter := func(chat, user int64) brain.DeadLetter {
		return brain.DeadLetter{Kind: brain.DeadRunFailed, Chat: chat, User: user, At: at,
			Signals: []brain.Signal{{ID: 1, Type: brain.SignalUserMessage, Chat: chat, User: user, Text: "words"}}}
	}
	ids := buryAll(t, s, letter(ann, ann), letter(grp, ann), letter(grp, ben), letter(other, ben), letter(ben, ben))
	rep, err := s.ForgetUser(ann, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.DeadLetters != 1 {
		t.Errorf("report counts %d dead letters in other chats, want 1", rep.DeadLetters)
	}
	if got, want := deadIDs(t, s), []uint64{ids[2], ids[3], ids[4]}; !slices.Equal(got, want) {
		t.Errorf("after ForgetUser(ann): %v, want %v", got, want)
	}
	if err := s.Forget(other); err != nil {
		t.Fatal(err)
	}
	if got, want := deadIDs(t, s), []uint64{ids[2], ids[4]}; !slices.Equal(got, want) {
		t.Errorf("after Forget(group): %v, want %v", got, want)
	}
}

// TestOutboxRecordsUser: an outbox entry records the user of the turn that wrote it (a
// refused message's dead letter is theirs), across a restart.
func TestOutboxRecordsUser(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "anima.db"))
	if _, err := s.CommitTurn(storage.Commit{Chat: -100, User: 3, Outbox: []brain.SendMessage{{Chat: -100, Text: "to 3"}}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	out, err := s.PendingOutbox()
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].User != 3 {
		t.Errorf("outbox %+v, want one entry of user 3", out)
	}
}
