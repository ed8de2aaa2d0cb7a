package loop_test

import (
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

func TestLoopCommands(t *testing.T) {
	t.Parallel()
	t.Run("answered without the model", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.start()
		h.submit(h.command(1, 9, "/status"))
		m := recv(t, h.sender.attempts, "the command's reply")
		h.stop()
		if m.Chat != 9 || m.Text != "ok /status" || m.Kind != brain.KindSystem {
			t.Errorf("sent %+v", m)
		}
		if n := len(h.think.Wakes()); n != 0 {
			t.Errorf("Think called %d times for a command, want 0", n)
		}
		if len(h.cmds.sigs) != 1 || h.cmds.sigs[0].Text != "/status" {
			t.Fatalf("handler saw %+v", h.cmds.sigs)
		}
		if v := h.cmds.views[0]; v.Rel.Chat != 9 || !v.Now.Equal(t0) || v.Loc == nil {
			t.Errorf("view = %+v, want chat 9's relationship, the clock's time and a zone", v)
		}
		recs := h.journal.Recs()
		if len(recs) != 1 || !slices.Equal(recs[0].Done, []uint64{1}) {
			t.Errorf("records %+v, want one consuming signal 1", recs)
		}
		if !slices.Equal(h.journal.Marked(), []uint64{101}) {
			t.Errorf("marked %v, want [101]", h.journal.Marked())
		}
	})

	t.Run("forget removes the relationship", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cmds.forget = true
		h.st.Upsert(quietRel(9, time.Hour))
		h.st.Upsert(quietRel(10, time.Hour))
		h.st.Thoughts = []brain.Thought{{Chat: 9, Text: "ask about the trip", At: t0, Handled: true}}
		h.start()
		h.submit(h.command(1, 9, "/forget yes"))
		recv(t, h.sender.attempts, "the command's reply")
		h.stop() // waits for the run and applies its result

		if h.st.Rel(9) != nil {
			t.Error("relationship of chat 9 still in memory")
		}
		if h.st.Rel(10) == nil {
			t.Error("relationship of chat 10 was removed too")
		}
		if !slices.Equal(h.store.deleted, []int64{9}) {
			t.Errorf("DeleteRelationship calls %v, want [9]", h.store.deleted)
		}
		if _, ok := h.store.rels[9]; ok {
			t.Error("a flush wrote the forgotten relationship back")
		}
		if len(h.st.Thoughts) != 0 {
			t.Errorf("thoughts of the forgotten chat kept: %+v", h.st.Thoughts)
		}
	})
}
