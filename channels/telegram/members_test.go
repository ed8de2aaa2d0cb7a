package telegram

import (
	"context"
	"strings"
	"testing"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestIsAdmin: the owner and administrators of a group are admins, other members are not,
// and a failed getChatMember is an error that does not show the token.
func TestIsAdmin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	const group = -100777
	h.srv.SetMember(group, 1, telegramtest.StatusOwner)
	h.srv.SetMember(group, 2, telegramtest.StatusAdmin)
	ctx := context.Background()
	for user, want := range map[int64]bool{1: true, 2: true, 3: false} {
		got, err := h.ch.IsAdmin(ctx, group, user)
		if err != nil || got != want {
			t.Errorf("IsAdmin(%d) = %v, %v; want %v", user, got, err, want)
		}
	}
	var call telegramtest.Call
	for _, c := range h.srv.Calls() {
		if c.Method == "getChatMember" {
			call = c
		}
	}
	if call.Status != 200 {
		t.Errorf("getChatMember answered %d: the request broke the Bot API's rules", call.Status)
	}
	// A proxy's error page that quotes the request URL, token and all.
	h.srv.InjectFault("getChatMember", telegramtest.Fault{Code: 502, RawBody: "<html>bad gateway for /bot" + h.srv.Token + "/getChatMember</html>"})
	_, err := h.ch.IsAdmin(ctx, group, 1)
	if err == nil || strings.Contains(err.Error(), h.srv.Token) {
		t.Errorf("IsAdmin on a failed call = %v; want an error without the token", err)
	}
}
