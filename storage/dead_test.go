package storage_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// buryAll keeps the letters and returns their ids in the order given.
func buryAll(t *testing.T, s *storage.Store, letters ...brain.DeadLetter) []uint64 {
	t.Helper()
	for _, d := range letters {
		if _, err := s.Bury(d); err != nil {
			t.Fatal(err)
		}
	}
	ids := deadIDs(t, s)
	return ids[len(ids)-len(letters):]
}

// deadIDs are the ids of every letter kept, oldest first.
func deadIDs(t *testing.T, s *storage.Store) []uint64 {
	t.Helper()
	return listed(t, s.DeadLetters, func(d brain.DeadLetter) (uint64, bool) { return d.ID, true })
}

// TestDeadLetters: buried letters are listed oldest first whatever their chat, shown
// whole by id; an unknown id is ErrNoDeadLetter.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
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

// TestReviveDeadLetter: a refused message goes back into the outbox (its parts
// delivered before the refusal still skipped); a failed run's
// signals go back into the inbox with fresh ids, stamped at the retry; either way the
// letter is gone, and a second retry finds nothing.
func TestReviveDeadLetter(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
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
	out := outboxOf(t, s)
	if len(out) != 1 || out[0].Msg.Text != "try me again" || out[0].Msg.SkipParts != 1 || out[0].User != 9 || len(rv.Outbox) != 1 || rv.Outbox[0].ID != out[0].ID {
		t.Errorf("outbox after retry %+v (revival %+v), want the message once, from the part never delivered", out, rv.Outbox)
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
	s, _ := openTemp(t)
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
	s, _ := openTemp(t)
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
	s, _ := openTemp(t)
	if _, err := s.CommitTurn(storage.Commit{Chat: -100, User: 3, Outbox: []brain.SendMessage{{Chat: -100, Text: "to 3"}}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	out := outboxOf(t, s)
	if len(out) != 1 || out[0].User != 3 {
		t.Errorf("outbox %+v, want one entry of user 3", out)
	}
}

// TestDeadLettersCapped: past a cap, burying a letter deletes the oldest of that user's
// (in every chat) or that chat's, the newest kept, and Bury says how many went; other
// users' and chats' letters stay.
func TestDeadLettersCapped(t *testing.T) {
	t.Parallel()
	const ann, ben, grp = 1, 2, -100
	letter := func(chat, user int64, text string) brain.DeadLetter {
		return brain.DeadLetter{Kind: brain.DeadRunFailed, Chat: chat, User: user, At: time.Now(), Reason: "model said no",
			Signals: []brain.Signal{{ID: 1, Type: brain.SignalUserMessage, Chat: chat, User: user, Text: text}}}
	}
	texts := func(t *testing.T, s *storage.Store, chat, user int64) []string {
		t.Helper()
		return listed(t, s.DeadLetters, func(d brain.DeadLetter) (string, bool) {
			return d.Signals[0].Text, d.Chat == chat && d.User == user
		})
	}
	for _, tc := range []struct {
		name             string
		perUser, perChat int
		bury             []brain.DeadLetter // after ben's letter in the group and ann's in her chat
		wantDropped      []int              // Bury's answer for each of bury
		wantAnn          []string           // ann's letters left in her private chat
		wantAnnGroup     []string           // ann's letters left in the group
		wantBen          int                // ben's letters left in the group
	}{{
		name: "per user across chats", perUser: 3, perChat: 10,
		bury:        []brain.DeadLetter{letter(ann, ann, "a1"), letter(grp, ann, "g1"), letter(ann, ann, "a2"), letter(ann, ann, "a3")},
		wantDropped: []int{0, 0, 1, 1},
		// ann's first letter (buried before the cases) and then a1 went.
		wantAnn: []string{"a2", "a3"}, wantAnnGroup: []string{"g1"}, wantBen: 1,
	}, {
		name: "per chat across users", perUser: 10, perChat: 2,
		bury:        []brain.DeadLetter{letter(grp, ann, "g1"), letter(grp, ann, "g2")},
		wantDropped: []int{0, 1},
		// ben's letter in the group was the oldest there.
		wantAnn: []string{"a0"}, wantAnnGroup: []string{"g1", "g2"}, wantBen: 0,
	}, {
		name: "cap of one keeps the newest", perUser: 1, perChat: 1,
		bury:        []brain.DeadLetter{letter(ann, ann, "a1"), letter(ann, ann, "a2")},
		wantDropped: []int{1, 1},
		wantAnn:     []string{"a2"}, wantBen: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := openWith(t, filepath.Join(t.TempDir(), "anima.db"), storage.Options{DeadPerUser: tc.perUser, DeadPerChat: tc.perChat})
			buryAll(t, s, letter(grp, ben, "b0"), letter(ann, ann, "a0"))
			var dropped []int
			for _, d := range tc.bury {
				n, err := s.Bury(d)
				if err != nil {
					t.Fatal(err)
				}
				dropped = append(dropped, n)
			}
			if !slices.Equal(dropped, tc.wantDropped) {
				t.Errorf("Bury dropped %v, want %v", dropped, tc.wantDropped)
			}
			if got := texts(t, s, ann, ann); !slices.Equal(got, tc.wantAnn) {
				t.Errorf("ann's letters in her chat %v, want %v", got, tc.wantAnn)
			}
			if got := texts(t, s, grp, ann); !slices.Equal(got, tc.wantAnnGroup) {
				t.Errorf("ann's letters in the group %v, want %v", got, tc.wantAnnGroup)
			}
			if got := texts(t, s, grp, ben); len(got) != tc.wantBen {
				t.Errorf("ben's letters in the group %v, want %d", got, tc.wantBen)
			}
		})
	}
}

// TestDeadLettersDefaultCap: 1,000 failures of one user leave storage.DeadPerUser letters,
// the newest, and the rest counted as dropped.
func TestDeadLettersDefaultCap(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	const failures = 1000
	total := 0
	for i := range failures {
		n, err := s.Bury(brain.DeadLetter{Kind: brain.DeadRunFailed, Chat: 7, User: 7, At: time.Now(), Reason: "400",
			Signals: []brain.Signal{{ID: uint64(i + 1), Type: brain.SignalUserMessage, Chat: 7, User: 7, Text: fmt.Sprint(i)}}})
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	ids := deadIDs(t, s)
	if len(ids) != storage.DeadPerUser || ids[0] != failures-storage.DeadPerUser+1 || ids[len(ids)-1] != failures {
		t.Errorf("%d letters kept (ids %v…), want the newest %d", len(ids), ids[:min(len(ids), 3)], storage.DeadPerUser)
	}
	if total != failures-storage.DeadPerUser {
		t.Errorf("Bury reported %d dropped, want %d", total, failures-storage.DeadPerUser)
	}
}

// TestDeadReasonCut: a reason longer than DeadReasonMax is kept cut, with a mark, at a
// rune boundary; a short one whole.
func TestDeadReasonCut(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	long := "400 " + strings.Repeat("é", storage.DeadReasonMax) // 2 bytes a rune
	msg := brain.SendMessage{Chat: 9, Text: strings.Repeat("whole ", 2000)}
	ids := buryAll(t, s,
		brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: 9, User: 9, At: time.Now(), Reason: long, Message: &msg},
		brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: 9, User: 9, At: time.Now(), Reason: "short", Message: &msg},
	)
	d, err := s.DeadLetter(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Reason) > storage.DeadReasonMax || !utf8.ValidString(d.Reason) || !strings.HasPrefix(d.Reason, "400 éé") || !strings.HasSuffix(d.Reason, "…[cut]") {
		t.Errorf("long reason kept as %d bytes ending %q, want at most %d, valid UTF-8, with the cut mark", len(d.Reason), d.Reason[max(len(d.Reason)-12, 0):], storage.DeadReasonMax)
	}
	if d.Message.Text != msg.Text {
		t.Errorf("message kept as %d bytes, want its %d whole (a retry sends it)", len(d.Message.Text), len(msg.Text))
	}
	if d, err := s.DeadLetter(ids[1]); err != nil || d.Reason != "short" {
		t.Errorf("short reason kept as %q (%v)", d.Reason, err)
	}
}
