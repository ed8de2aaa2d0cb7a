package loop_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain"
)

func TestLoopFoldsBurstAndKeepsChatsIndependent(t *testing.T) {
	t.Parallel()
	const a, b = 1, 2
	h := newHarness(t, noProactive())
	releaseA, first := h.busy(a, "one")
	if !slices.Equal(signalIDs(first), []uint64{1}) {
		t.Fatalf("first wake has %v", signalIDs(first))
	}
	h.submit(h.msg(2, a, "two"))
	h.submit(h.msg(3, a, "three"))
	h.submit(h.msg(4, a, "four"))
	h.submit(h.msg(5, b, "bee"))

	// B is answered while A's run is still gated.
	if w := recv(t, h.think.entered, "B's run"); w.Chat != b {
		t.Fatalf("next run is for chat %d, want %d", w.Chat, b)
	}
	if m := recv(t, h.sender.attempts, "B's reply"); m.Chat != b || m.Text != "re: bee" {
		t.Fatalf("first message sent = %+v, want B's reply", m)
	}

	close(releaseA)
	w := recv(t, h.think.entered, "A's second run")
	if w.Chat != a || !slices.Equal(signalIDs(w), []uint64{2, 3, 4}) {
		t.Fatalf("second run: chat %d signals %v, want chat %d with [2 3 4]", w.Chat, signalIDs(w), a)
	}
	recv(t, h.sender.attempts, "A's first reply")
	recv(t, h.sender.attempts, "A's second reply")
	h.stop()

	if got, want := h.sender.SentTo(a), []string{"re: one", "re: two|three|four"}; !slices.Equal(got, want) {
		t.Errorf("A got %q, want %q", got, want)
	}
	if n := len(h.think.Wakes()); n != 3 {
		t.Errorf("Think called %d times, want 3", n)
	}
	var done []uint64
	for _, r := range h.journal.Recs() {
		if r.Chat == a {
			done = append(done, r.Done...)
		}
	}
	if !slices.Equal(done, []uint64{1, 2, 3, 4}) {
		t.Errorf("A's records consumed %v, want [1 2 3 4]", done)
	}
}

func TestLoopOrderPerChatAndBoundedConcurrency(t *testing.T) {
	t.Parallel()
	const chatsN, perChat = 4, 5
	h := newHarness(t, noProactive())
	h.cfg.MaxConcurrent = 2
	h.think.gate = make(chan struct{})
	h.start()

	var id uint64
	for i := range perChat {
		for c := int64(1); c <= chatsN; c++ {
			id++
			h.submit(h.msg(id, c, fmt.Sprintf("c%d-m%d", c, i)))
		}
	}
	// Two runs start and are gated; only releasing one lets another start.
	recv(t, h.think.entered, "first run")
	recv(t, h.think.entered, "second run")

	stopFeed := make(chan struct{})
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for {
			select {
			case h.think.gate <- struct{}{}:
			case <-stopFeed:
				return
			}
		}
	}()
	consumed := 0
	for consumed < chatsN*perChat {
		consumed += len(recv(t, h.journal.commits, "a turn record").Done)
	}
	close(stopFeed)
	<-fed
	h.stop()

	h.think.mu.Lock()
	maxIn, overlap := h.think.maxIn, h.think.overlap
	h.think.mu.Unlock()
	if maxIn != 2 {
		t.Errorf("at most %d runs at once, want exactly 2 (MaxConcurrent)", maxIn)
	}
	if overlap {
		t.Error("two runs of one chat overlapped")
	}
	seen := map[int64][]string{}
	for _, w := range h.think.Wakes() {
		for _, s := range w.Signals {
			seen[w.Chat] = append(seen[w.Chat], s.Text)
		}
	}
	for c := int64(1); c <= chatsN; c++ {
		var want []string
		for i := range perChat {
			want = append(want, fmt.Sprintf("c%d-m%d", c, i))
		}
		if !slices.Equal(seen[c], want) {
			t.Errorf("chat %d thought about %q, want %q in order", c, seen[c], want)
		}
		var replies []string
		for _, r := range h.sender.SentTo(c) {
			replies = append(replies, strings.Split(strings.TrimPrefix(r, "re: "), "|")...)
		}
		if !slices.Equal(replies, want) {
			t.Errorf("chat %d replies cover %q, want %q in order", c, replies, want)
		}
	}
}

// TestLoopFoldingKeepsOrderAroundCommands: a burst is folded only while nothing else is
// queued after it; a message sent after a command is answered after the command.
func TestLoopFoldingKeepsOrderAroundCommands(t *testing.T) {
	t.Parallel()
	const a, b = 1, 2
	h := newHarness(t, noProactive())
	gate, _ := h.busy(a, "one")
	h.submit(h.msg(2, a, "two"))
	h.submit(h.command(3, a, "/quiet"))
	h.submit(h.msg(4, a, "three"))
	h.submit(h.msg(5, a, "four"))
	h.submit(h.msg(6, b, "bee")) // processed after all of A's: a barrier
	recv(t, h.sender.attempts, "B's reply")

	close(gate)
	for range 4 {
		recv(t, h.sender.attempts, "A's messages")
	}
	h.stop()
	want := []string{"re: one", "re: two", "ok /quiet", "re: three|four"}
	if got := h.sender.SentTo(a); !slices.Equal(got, want) {
		t.Errorf("A got %q, want %q", got, want)
	}
}

// TestLoopGroupRunsAnswerOneSender: messages queued behind a group's running turn fold
// only while they come from one member; each run answers exactly one sender, its wake
// carries that sender, and the turn stores who wrote each message.
func TestLoopGroupRunsAnswerOneSender(t *testing.T) {
	t.Parallel()
	const g, ann, ben = -7, 1, 2
	h := newHarness(t, noProactive())
	gate := h.gate(g)
	h.start()
	msg := func(id uint64, user int64, name, text string) brain.Signal {
		return brain.Signal{ID: id, Type: brain.SignalUserMessage, Source: "test", Chat: g, User: user, UserName: name, Text: text, At: t0}
	}

	h.submit(msg(1, ben, "Ben", "first")) // Ben is the group's first sender
	recv(t, h.think.entered, "the first run")
	h.submit(msg(2, ann, "Ann", "a1"))
	h.submit(msg(3, ann, "Ann", "a2"))
	h.submit(msg(4, ben, "Ben", "b1"))
	h.submit(msg(5, ann, "Ann", "a3"))
	h.submit(h.msg(6, 9, "barrier")) // processed after all of the group's
	recv(t, h.sender.attempts, "the barrier's reply")
	close(gate)
	for range 4 {
		recv(t, h.sender.attempts, "the group's answers")
	}
	h.stop()

	type run struct {
		user int64
		ids  string
	}
	var got []run
	for _, w := range h.think.Wakes() {
		if w.Chat == g {
			got = append(got, run{w.User, fmt.Sprint(signalIDs(w))})
		}
	}
	want := []run{{ben, "[1]"}, {ann, "[2 3]"}, {ben, "[4]"}, {ann, "[5]"}}
	if !slices.Equal(got, want) {
		t.Errorf("group runs %v, want %v", got, want)
	}
	for _, r := range h.journal.Recs() {
		for _, turn := range r.Turns {
			if r.Chat == g && turn.User != r.User {
				t.Errorf("turn %+v of a run for user %d", turn, r.User)
			}
			if r.Chat == g && turn.Role == "user" && turn.Name == "" {
				t.Errorf("user turn without its writer's name: %+v", turn)
			}
		}
	}
}
