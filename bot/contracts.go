package bot

import (
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/channels"
)

// The compile-time checks that one package's types satisfy another's interfaces, where
// neither may import the other (arrows point down: a channel knows no engine, the
// store no engine that keeps data in it). Bot imports both sides, so the checks live here.
var (
	_ channels.Sink = (*loop.Inbox)(nil)
)
