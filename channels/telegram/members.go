package telegram

import (
	"context"
	"fmt"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// IsAdmin reports whether user is the owner or an administrator of the group chat
// (getChatMember). Errors are Telegram's, with the token redacted.
func (c *Channel) IsAdmin(ctx context.Context, chat, user int64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := c.bot.GetChatMember(ctx, &bot.GetChatMemberParams{ChatID: chat, UserID: user})
	if err = c.redact(err); err != nil {
		return false, fmt.Errorf("telegram getChatMember: %w", err)
	}
	return m.Type == models.ChatMemberTypeOwner || m.Type == models.ChatMemberTypeAdministrator, nil
}
