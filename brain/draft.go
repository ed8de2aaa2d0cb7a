package brain

import "context"

// Drafter shows a reply while it is being written: a preview the user watches grow, which
// the reply itself replaces when it is sent through the outbox. A loop.Sender may implement it;
// the core loop hands it to cognition on the wakes that answer someone in a private chat
// (Wake.Drafter).
type Drafter interface {
	// Draft shows text (Markdown, as the model writes it; "" shows a "thinking…"
	// placeholder) as the draft of chat's next message. The implementation paces the
	// updates and may skip some; a draft that fails is not reported. An error means drafts
	// cannot be shown in chat (refused, or the user blocked the bot): the caller stops
	// drafting for the rest of the run.
	Draft(ctx context.Context, chat int64, text string) error
}
