package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage/storagetest"
)

// TestFactsAreScopedByChatAndUser: what a user told anima in private never enters a
// group's recall or search, and a fact told in a group is that member's fact there.
func TestFactsAreScopedByChatAndUser(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{})
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
