package telegramtest

import (
	"strconv"
)

// Member statuses getChatMember answers (Telegram's ChatMember.status).
const (
	StatusOwner  = "creator"
	StatusAdmin  = "administrator"
	StatusMember = "member"
)

// SetMember sets user's status in chat for getChatMember; a user never set is a plain
// member.
func (s *Server) SetMember(chat, user int64, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members == nil {
		s.members = map[int64]map[int64]string{}
	}
	if s.members[chat] == nil {
		s.members[chat] = map[int64]string{}
	}
	s.members[chat][user] = status
}

// getChatMember answers with the ChatMember object of the status set for the user, with
// the fields Telegram always sends for it.
func (s *Server) getChatMember(p map[string]string) (any, *apiError) {
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	user, perr := strconv.ParseInt(p["user_id"], 10, 64)
	if perr != nil {
		return nil, badRequest("invalid user_id specified")
	}
	s.mu.Lock()
	status := s.members[chat][user]
	s.mu.Unlock()
	who := map[string]any{"id": user, "is_bot": false, "first_name": "User " + strconv.FormatInt(user, 10)}
	switch status {
	case StatusOwner:
		return map[string]any{"status": StatusOwner, "user": who, "is_anonymous": false}, nil
	case StatusAdmin:
		m := map[string]any{"status": StatusAdmin, "user": who, "is_anonymous": false, "can_be_edited": false}
		for _, f := range []string{"can_manage_chat", "can_delete_messages", "can_manage_video_chats", "can_restrict_members",
			"can_promote_members", "can_change_info", "can_invite_users", "can_post_stories", "can_edit_stories", "can_delete_stories"} {
			m[f] = true
		}
		return m, nil
	default:
		return map[string]any{"status": StatusMember, "user": who}, nil
	}
}
