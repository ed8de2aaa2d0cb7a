package telegramtest

import (
	"context"
	"testing"
)

func TestSendMessageDraftFollowsTheSpec(t *testing.T) {
	t.Parallel()
	s := New(t)
	tests := []struct {
		name, body string
		status     int
	}{
		{"private chat", `{"chat_id": 42, "draft_id": 7, "text": "<b>Hel</b>lo", "parse_mode": "HTML"}`, 200},
		{"placeholder", `{"chat_id": 42, "draft_id": 7}`, 200},
		{"group chat", `{"chat_id": -100123, "draft_id": 7, "text": "hi"}`, 400},
		{"no draft id", `{"chat_id": 42, "text": "hi"}`, 400},
		{"zero draft id", `{"chat_id": 42, "draft_id": 0, "text": "hi"}`, 400},
		{"no chat", `{"draft_id": 7, "text": "hi"}`, 400},
		{"bad HTML", `{"chat_id": 42, "draft_id": 7, "text": "<b>open", "parse_mode": "HTML"}`, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if status, env := rawCall(t, s, s.Token, "sendMessageDraft", tc.body); status != tc.status {
				t.Errorf("status %d (%v), want %d", status, env, tc.status)
			}
		})
	}
	ds := s.DraftsTo(42)
	if len(ds) != 2 || ds[0].Visible != "Hello" || ds[0].DraftID != 7 || ds[1].Text != "" {
		t.Fatalf("drafts = %+v", ds)
	}
	if got, err := s.WaitDrafts(context.Background(), 2); err != nil || len(got) != 2 {
		t.Fatalf("WaitDrafts = %d, %v", len(got), err)
	}
	if len(s.Sent()) != 0 {
		t.Error("a draft was recorded as a sent message")
	}
}
