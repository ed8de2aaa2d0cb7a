package memory_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
)

// TestFactsAreScopedByChatAndUser: what a user told anima in private never enters a
// group's recall or search, and a fact told in a group is that member's fact there.
func TestFactsAreScopedByChatAndUser(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "anima.db"))
	m := memory.New(st, nil, memory.Options{})
	const ann, ben, grp = 1, 2, -100
	for _, f := range []struct {
		chat, user int64
		attr, val  string
	}{{ann, ann, "diagnosis", "secretflu"}, {grp, ben, "colour", "green"}, {grp, ann, "pet", "cat"}} {
		if err := m.Remember(f.chat, f.user, f.attr, f.val, t0); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, st, m, grp, brain.Turn{Role: "user", Text: "hello", At: t0, User: ann, Name: "Ann"})

	for _, c := range []struct {
		name       string
		chat, user int64
		want       string
	}{
		{"ann in private", ann, ann, "diagnosis=secretflu"},
		{"ann in the group", grp, ann, "pet=cat"},
		{"ben in the group", grp, ben, "colour=green"},
		{"ben in private", ben, ben, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := m.Recall(context.Background(), c.chat, c.user, "secretflu green cat diagnosis", 1000)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Facts {
				got = append(got, f.Attribute+"="+f.Value)
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("facts %q, want %q", got, c.want)
			}
			hits, err := m.Search(c.chat, c.user, "secretflu green cat", 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Source == "fact" && !strings.Contains(c.want, strings.ReplaceAll(h.Text, ": ", "=")) {
					t.Errorf("search hit %q is not this chat's fact about this user", h.Text)
				}
			}
		})
	}
}

// TestUnindexRemovesTurnsFromSearch: turns taken out of the index (a member's /forget)
// are not found any more; the others still are, labelled with their writer.
func TestUnindexRemovesTurnsFromSearch(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "anima.db"))
	m := memory.New(st, nil, memory.Options{})
	const grp = -100
	commit(t, st, m, grp,
		brain.Turn{Role: "user", Text: "my bicycle is red", At: t0, User: 1, Name: "Ann"},
		brain.Turn{Role: "user", Text: "my bicycle is blue", At: t0, User: 2, Name: "Ben"})
	h, _ := st.History(grp, 0)
	rep, err := st.ForgetUser(1, m.UnindexTx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns != 1 || h[0].User != 1 {
		t.Fatalf("forgot %d turns, want Ann's one", rep.Turns)
	}
	hits, err := m.Search(grp, 2, "bicycle", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Text != `"Ben": my bicycle is blue` {
		t.Errorf("hits after Ann's forget = %+v, want only Ben's turn, labelled", hits)
	}
	// The index stays usable: a new turn is found.
	commit(t, st, m, grp, brain.Turn{Role: "user", Text: "bicycle again", At: t0, User: 2, Name: "Ben"})
	if hits, _ := m.Search(grp, 2, "bicycle", 10); len(hits) != 2 {
		t.Errorf("hits after a new turn = %+v, want 2", hits)
	}
}
