package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

func TestHowTheyAreTool(t *testing.T) {
	t.Parallel()
	m := newMemory(t, storagetest.New(), nil, memory.Options{})
	var tool brain.Tool
	for _, tl := range m.Tools() {
		if tl.Spec().Name == memory.ToolHowTheyAre {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatalf("memory offers no %s", memory.ToolHowTheyAre)
	}
	spec := tool.Spec()
	if !spec.SideEffects || !cmp.Equal(spec.Profiles, []brain.Profile{brain.ProfileChat, brain.ProfileDream}) {
		t.Errorf("spec = %+v: want a side-effecting tool of chat and dream runs", spec)
	}
	long := strings.Repeat("word ", 60)
	tests := []struct {
		name    string
		user    int64
		args    string
		wantErr bool
		want    brain.Intent
	}{
		{"adds", 7, `{"note":" exhausted,\nbig deadline Friday ","replace":false}`, false,
			brain.NoteState{Chat: -5, User: 7, Text: "exhausted, big deadline Friday"}},
		{"replaces", 7, `{"note":"rested after the deadline","replace":true}`, false,
			brain.NoteState{Chat: -5, User: 7, Text: "rested after the deadline", Replace: true}},
		{"cut with a mark", 7, `{"note":"` + long + `","replace":false}`, false,
			brain.NoteState{Chat: -5, User: 7, Text: brain.CleanStateLine(long)}},
		{"missing replace", 7, `{"note":"tired"}`, true, nil},
		{"null note", 7, `{"note":null,"replace":false}`, true, nil},
		{"blank note", 7, `{"note":" \n ","replace":false}`, true, nil},
		{"unknown field", 7, `{"note":"tired","replace":false,"who":"Ann"}`, true, nil},
		{"no person", 0, `{"note":"tired","replace":false}`, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := tool.Call(context.Background(), brain.ToolCall{Chat: -5, User: tc.user, Args: json.RawMessage(tc.args), Now: t0})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if len(res.Intents) != 1 || res.Intents[0] != tc.want {
				t.Errorf("intents = %#v, want %#v", res.Intents, tc.want)
			}
		})
	}
}

// noteState writes a line of how user is in chat, as the journal does in a turn.
func noteState(t *testing.T, st *storage.Store, m *memory.Memory, chat, user int64, text string, replace bool, at time.Time) {
	t.Helper()
	if err := st.Update(func(tx *storage.Tx) error { return m.NoteStateTx(tx, chat, user, text, replace, at) }); err != nil {
		t.Fatalf("NoteStateTx: %v", err)
	}
}

func TestHowTheyAreSurvivesReopenFadesAndIsRecalledPerMember(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	now := t0.Add(20 * 24 * time.Hour)
	clock := braintest.NewClock(now)
	m := newMemory(t, st, nil, memory.Options{Clock: clock})
	noteState(t, st, m, 7, 7, "faded: a cold three weeks ago", false, t0)
	noteState(t, st, m, 7, 7, "exhausted, big deadline Friday", false, now.Add(-2*time.Hour))
	const group = -100
	for i, u := range []int64{1, 2, 3, 4, 5} {
		noteState(t, st, m, group, u, "member "+string(rune('A'+i))+" is fine", false, now.Add(-time.Hour))
	}
	_ = st.Close()

	st = storagetest.Open(t, path)
	m = newMemory(t, st, nil, memory.Options{Clock: clock})
	lines, err := m.HowTheyAre(7, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := []brain.StateLine{{Text: "exhausted, big deadline Friday", At: now.Add(-2 * time.Hour)}}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("HowTheyAre after reopen (-want +got):\n%s", diff)
	}
	commit(t, st, m, 7, brain.Turn{Role: "user", Text: "hi", At: now, User: 7})
	rc, err := m.Recall(context.Background(), 7, 7, "hi", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]brain.StateNote{{User: 7, Lines: want}}, rc.HowTheyAre); diff != "" {
		t.Errorf("private Recall.HowTheyAre (-want +got):\n%s", diff)
	}

	// In a group: the wake's member first, then the last members to write, at most 4;
	// member 5 has a note but wrote nothing recalled, member 9 wrote but has no note.
	commit(t, st, m, group,
		brain.Turn{Role: "user", Text: "a", At: now, User: 1, Name: "Ann"},
		brain.Turn{Role: "user", Text: "b", At: now, User: 9, Name: "Zed"},
		brain.Turn{Role: "assistant", Text: "c", At: now, User: 9},
		brain.Turn{Role: "user", Text: "d", At: now, User: 2, Name: "Ben"},
		brain.Turn{Role: "user", Text: "e", At: now, User: 3, Name: "Cy"},
	)
	rc, err = m.Recall(context.Background(), group, 3, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range rc.HowTheyAre {
		got = append(got, n.Name+": "+n.Lines[0].Text)
	}
	wantNames := []string{"Cy: member C is fine", "Ben: member B is fine", "Ann: member A is fine"}
	if diff := cmp.Diff(wantNames, got); diff != "" {
		t.Errorf("group Recall.HowTheyAre (-want +got):\n%s", diff)
	}
}

// TestForgetUserErasesHowTheyAre: /forget deletes the user's notes, their private chat's
// and, in a group, theirs alone, in the forget's transaction; after a compaction the
// words are nowhere in the file.
func TestForgetUserErasesHowTheyAre(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	m := newMemory(t, st, nil, memory.Options{Clock: braintest.NewClock(t0)})
	noteState(t, st, m, 7, 7, "Quokkasecret private exhaustion", false, t0)
	noteState(t, st, m, -100, 7, "Wombatsecret group deadline", false, t0)
	noteState(t, st, m, -100, 8, "Platypuskept other member", false, t0)
	rep, err := st.ForgetUser(7, nil, func(tx *storage.Tx, user int64) ([]int64, error) { return m.ForgetHowTheyAreTx(tx, user) })
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Erased || !cmp.Equal(rep.Chats, []int64{-100}) {
		t.Errorf("report = %+v, want erased in chat -100", rep)
	}
	for _, c := range []struct{ chat, user int64 }{{7, 7}, {-100, 7}} {
		if lines, _ := m.HowTheyAre(c.chat, c.user); len(lines) != 0 {
			t.Errorf("note of %d in %d after forget: %+v", c.user, c.chat, lines)
		}
	}
	if lines, _ := m.HowTheyAre(-100, 8); len(lines) != 1 {
		t.Errorf("another member's note = %+v, want it kept", lines)
	}
	if _, err := st.Compact(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Quokkasecret", "Wombatsecret"} {
		if bytes.Contains(raw, []byte(w)) {
			t.Errorf("%q is still in the store file after /forget and a compaction", w)
		}
	}
	if !bytes.Contains(raw, []byte("Platypuskept")) {
		t.Error("the other member's note is not in the file: the scan cannot see notes")
	}
}

// FuzzHowTheyAreTool: whatever the model sends, the tool answers an error or one
// NoteState whose line is one non-empty line of valid UTF-8 within brain.StateLineRunes,
// and a note written from such lines never holds more than brain.StateLines.
func FuzzHowTheyAreTool(f *testing.F) {
	for _, s := range []string{`{"note":"tired","replace":false}`, `{"note":"a\nb","replace":true}`, `{"note":"` + strings.Repeat("é", 300) + `","replace":false}`,
		`{"note":"\u0000","replace":false}`, `{"note":" ","replace":true}`, `[]`, `{"note":"x"}`} {
		f.Add(s)
	}
	m := newMemory(f, storagetest.New(), nil, memory.Options{})
	var tool brain.Tool
	for _, tl := range m.Tools() {
		if tl.Spec().Name == memory.ToolHowTheyAre {
			tool = tl
		}
	}
	f.Fuzz(func(t *testing.T, args string) {
		res, err := tool.Call(context.Background(), brain.ToolCall{Chat: 1, User: 1, Args: json.RawMessage(args), Now: t0})
		if err != nil {
			return
		}
		if len(res.Intents) != 1 {
			t.Fatalf("intents = %#v, want one", res.Intents)
		}
		in, ok := res.Intents[0].(brain.NoteState)
		if !ok || in.Text == "" || strings.ContainsFunc(in.Text, unicode.IsControl) || !utf8.ValidString(in.Text) ||
			utf8.RuneCountInString(in.Text) > brain.StateLineRunes {
			t.Fatalf("intent = %#v: not one clean line", res.Intents[0])
		}
		var lines []brain.StateLine
		for i := range brain.StateLines + 2 {
			lines = brain.AddStateLine(lines, in.Text, t0.Add(time.Duration(i)*time.Hour), in.Replace)
		}
		if len(lines) > brain.StateLines || (in.Replace && len(lines) != 1) {
			t.Fatalf("%d lines after %d writes (replace %v)", len(lines), brain.StateLines+2, in.Replace)
		}
	})
}
