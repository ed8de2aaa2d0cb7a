package innerlife_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// Two members of one group.
const (
	memberA = 111
	memberB = 222
	group   = -100500
)

// speak runs the tool for user in chat at at and commits its changes.
func speak(t *testing.T, p *innerlife.Plugin, b pluginstest.Bucket, tool brain.Tool, chat, user int64, at time.Time, args string) {
	t.Helper()
	p.Context(brain.Wake{Chat: chat, User: user, At: at, Rel: brain.Relationship{Chat: chat, User: user, Group: chat < 0}}, at)
	res, err := tool.Call(context.Background(), brain.ToolCall{Chat: chat, User: user, Args: json.RawMessage(args), Now: at})
	if err != nil {
		t.Fatalf("%s for %d in %d: %v", tool.Spec().Name, user, chat, err)
	}
	for _, in := range res.Intents {
		if c, ok := in.(brain.PluginChange); !ok || c.Chat != chat || c.User != user {
			t.Fatalf("%s for %d in %d returned %+v, not a change of that user's records", tool.Spec().Name, user, chat, in)
		}
	}
	apply(t, p, b, at, res.Intents...)
}

// TestGroupMembersKeptApart (issue 16): in a group the tools act for the speaker; A's
// concern and entry never reach B's run, /status, /thoughts or search, nor A's own private
// chat's; A's /forget removes A's records in every chat and leaves B's.
func TestGroupMembersKeptApart(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	p, b := newPlugin(t, at)
	concern, journal := p.Tools()[0], p.Tools()[1]
	speak(t, p, b, concern, group, memberA, at, `{"action":"open","id":null,"summary":"A's divorce hearing on Friday","kind":"event","check_in_at":null,"note":null}`)
	speak(t, p, b, journal, group, memberA, at, `{"kind":"observation","text":"A seems shaken by the divorce hearing."}`)
	speak(t, p, b, concern, group, memberB, at, `{"action":"open","id":null,"summary":"B's marathon","kind":"project","check_in_at":null,"note":null}`)
	speak(t, p, b, concern, memberA, memberA, at, `{"action":"open","id":null,"summary":"A's new flat","kind":"project","check_in_at":null,"note":null}`)

	views := func(chat, user int64) string {
		t.Helper()
		thoughts, _ := p.Command(chat, user, "/thoughts", "", at, time.UTC)
		hits, err := p.Search(b, chat, user, "divorce hearing marathon flat", 10)
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, h := range hits {
			found = append(found, h.Text)
		}
		sec := p.Context(brain.Wake{Chat: chat, User: user, Profile: brain.ProfileChat, Rel: brain.Relationship{Chat: chat, User: user, Group: chat < 0}}, at)
		return strings.Join([]string{p.Status(chat, user, at, time.UTC), thoughts, strings.Join(found, "\n"), strings.Join(sec.Lines, "\n")}, "\n")
	}
	for _, tc := range []struct {
		name       string
		chat, user int64
		want, not  []string
	}{
		{"B in the group", group, memberB, []string{"B's marathon"}, []string{"divorce", "new flat"}},
		{"A in the group", group, memberA, []string{"A's divorce hearing", "A seems shaken"}, []string{"marathon", "new flat"}},
		{"A in private", memberA, memberA, []string{"A's new flat"}, []string{"divorce", "marathon"}},
	} {
		got := views(tc.chat, tc.user)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: /status, /thoughts, search and prompt lack %q:\n%s", tc.name, w, got)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: /status, /thoughts, search or prompt show %q:\n%s", tc.name, w, got)
			}
		}
	}
	// B cannot close A's concern by its id.
	var id string
	for k, v := range b {
		var c innerlife.Concern
		if k[0] == 'C' && json.Unmarshal(v, &c) == nil && c.User == memberA && c.Chat == group {
			id = c.ID
		}
	}
	if _, err := concern.Call(context.Background(), brain.ToolCall{Chat: group, User: memberB, Now: at,
		Args: json.RawMessage(`{"action":"close","id":"` + id + `","summary":null,"kind":null,"check_in_at":null,"note":null}`)}); err == nil {
		t.Error("B closed A's concern")
	}

	if err := p.Forget(b, memberA); err != nil {
		t.Fatal(err)
	}
	for k, v := range b {
		if s := string(v); strings.Contains(s, "divorce") || strings.Contains(s, "shaken") || strings.Contains(s, "flat") {
			t.Errorf("after A's /forget the bucket holds %q → %s", k, s)
		}
	}
	for _, who := range [][2]int64{{group, memberA}, {memberA, memberA}} {
		if got := views(who[0], who[1]); strings.Contains(got, "divorce") || strings.Contains(got, "flat") {
			t.Errorf("after A's /forget, A's records in chat %d are still shown:\n%s", who[0], got)
		}
	}
	if got := views(group, memberB); !strings.Contains(got, "B's marathon") {
		t.Errorf("A's /forget took B's concern:\n%s", got)
	}
}

// oldKey is a key of the layout before records were scoped: tag, chat, rest.
func oldKey(tag byte, chat int64, rest ...byte) string {
	k := binary.BigEndian.AppendUint64([]byte{tag}, uint64(chat))
	return string(append(k, rest...))
}

// TestLoadMigratesChatKeyedRecords: records keyed by chat alone (before issue 16) are
// read as their private chat's user's after an upgrade; a group's, whose subject nobody
// recorded, are deleted.
func TestLoadMigratesChatKeyedRecords(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 3, 15, 0, 0, 0, time.UTC)
	b := pluginstest.Bucket{}
	put := func(k string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b[k] = data
	}
	// As the plugin wrote them before: no user field.
	put(oldKey('c', memberA, []byte("c1")...), map[string]any{"id": "c1", "chat": memberA, "summary": "the old flat", "kind": "project",
		"created": at, "touched": at, "check_in_at": at.Add(time.Hour)})
	put(oldKey('c', group, []byte("g1")...), map[string]any{"id": "g1", "chat": group, "summary": "someone's hearing", "kind": "event",
		"created": at, "touched": at})
	put(oldKey('j', memberA, binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), 1)...),
		map[string]any{"chat": memberA, "kind": "memory", "text": "they showed me the old flat", "at": at})
	put(oldKey('j', group, binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), 2)...),
		map[string]any{"chat": group, "kind": "memory", "text": "the group talked about a hearing", "at": at})
	put(oldKey('l', memberA), at)
	put(oldKey('l', group), at)

	p, _ := newPlugin(t, at)
	if err := p.Load(b); err != nil {
		t.Fatal(err)
	}
	thoughts, _ := p.Command(memberA, memberA, "/thoughts", "", at, time.UTC)
	if !strings.Contains(thoughts, "the old flat") || !strings.Contains(thoughts, "they showed me the old flat") {
		t.Errorf("A's /thoughts after the upgrade lacks A's old records:\n%s", thoughts)
	}
	for _, user := range []int64{memberA, memberB} {
		thoughts, _ := p.Command(group, user, "/thoughts", "", at, time.UTC)
		if s := p.Status(group, user, at, time.UTC) + thoughts; strings.Contains(s, "hearing") {
			t.Errorf("the group's unattributed records are shown to %d:\n%s", user, s)
		}
	}
	for k, v := range b {
		if k[0] == 'c' || k[0] == 'j' || k[0] == 'l' || strings.Contains(string(v), "hearing") {
			t.Errorf("after the upgrade the bucket still holds %q → %s", k, v)
		}
	}
	// The migrated check-in is still due, and /forget finds the migrated records.
	if sig, ok := p.Neurons()[0].Check(at.Add(2*time.Hour), &brain.State{}); !ok || sig.Chat != memberA {
		t.Errorf("the migrated check-in was not raised: %+v %v", sig, ok)
	}
	if err := p.Forget(b, memberA); err != nil {
		t.Fatal(err)
	}
	if len(b) != 0 {
		t.Errorf("A's /forget after the upgrade left %d keys", len(b))
	}
}
