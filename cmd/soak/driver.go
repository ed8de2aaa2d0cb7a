package main

import (
	"context"
	"strconv"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

// shortSummarizer stands in for the model: a summary of bounded size, at once.
type shortSummarizer struct{}

func (shortSummarizer) Summarize(_ context.Context, previous string, turns []brain.Turn) (string, error) {
	s := previous + " " + brain.TruncateRunes(turns[len(turns)-1].Text, 200)
	return brain.TruncateRunes(s, 2000), nil
}

// driver runs messages through the store as the core loop does.
type driver struct {
	// pages counts page writes by phase: record, commit, sent, upkeep.
	pages [4]int64
	// wchar and wbytes count wchar and write_bytes (/proc/self/io) by phase.
	wchar, wbytes [4]int64
	st            *storage.Store
	mem           *memory.Memory
	talk          *talker
	sent          int
	at            time.Time
}

// chatOf is the chat of the i-th message: chat 1 takes every other one, the other chats
// (private chats: chat = user) share the rest in turn.
func (d *driver) chatOf(i, chats int) int64 {
	if i%2 == 0 {
		return 1
	}
	return 2 + int64((i/2)%(chats-1))
}

// message records one user message and commits its turn with the reply, then records the
// reply's platform id and marks it sent and runs memory's upkeep, as the core loop does (bot's journal commits the
// turn with memory's IndexTx inside it).
func (d *driver) message(ctx context.Context, chat int64) error {
	d.sent++
	d.at = d.at.Add(time.Minute)
	sig := brain.Signal{Type: brain.SignalUserMessage, Source: "telegram", Chat: chat, User: chat, UserName: "Soak",
		Text: d.talk.say(300), At: d.at, Ref: strconv.Itoa(d.sent), MessageID: d.sent}
	mark := d.pageWrites()
	sigs, err := d.st.Record("telegram", []brain.Signal{sig}, int64(d.sent+1))
	if err != nil {
		return err
	}
	mark = d.phase(0, mark)
	reply := d.talk.say(110)
	turns := []brain.Turn{
		{Role: "user", Text: sig.Text, At: d.at, User: chat, Name: sig.UserName},
		{Role: "assistant", Text: reply, At: d.at, Kind: brain.KindReply, User: chat},
	}
	out, err := d.st.CommitTurn(storage.Commit{
		Done: []uint64{sigs[0].ID}, Chat: chat, Turns: turns,
		Outbox: []brain.SendMessage{{Chat: chat, Text: reply, Kind: brain.KindReply}},
		Also:   func(tx *storage.Tx) error { return d.mem.IndexTx(tx, chat, turns) },
	}, d.at)
	if err != nil {
		return err
	}
	mark = d.phase(1, mark)
	for _, e := range out {
		// The channel remembers the platform's id of what it sent (for reactions),
		// then the loop removes the entry from the outbox.
		if err := d.st.RecordSent(chat, 2*d.sent); err != nil {
			return err
		}
		if err := d.st.MarkSent(e.ID); err != nil {
			return err
		}
	}
	mark = d.phase(2, mark)
	err = d.mem.Maintain(ctx, chat)
	d.phase(3, mark)
	return err
}

// counters is where a phase starts: page writes and write_bytes.
type counters struct{ pages, wchar, wbytes int64 }

func (d *driver) pageWrites() counters {
	sp, _ := d.st.Space()
	io := readIO()
	return counters{pages: sp.PageWrites, wchar: io.wchar, wbytes: io.writeBytes}
}

// phase adds the page writes and bytes since mark to phase i and returns the new mark.
func (d *driver) phase(i int, mark counters) counters {
	now := d.pageWrites()
	d.pages[i] += now.pages - mark.pages
	d.wchar[i] += now.wchar - mark.wchar
	d.wbytes[i] += now.wbytes - mark.wbytes
	return now
}
