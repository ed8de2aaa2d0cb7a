package bot

import (
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/channels"
	"github.com/anima-bot/anima/storage"
)

// The compile-time checks that one package's types satisfy another's interfaces, where
// neither may import the other (arrows point down: a channel knows no engine, the
// store no engine that keeps data in it). Bot imports both sides, so the checks live here.
var (
	_ channels.Sink = (*loop.Inbox)(nil)

	_ memory.Tx                   = (*storage.Tx)(nil)
	_ memory.Store[*storage.Tx]   = (*storage.Store)(nil)
	_ memory.Meter                = embeddingMeter{}
	_ schedule.Tx                 = (*storage.Tx)(nil)
	_ schedule.Store[*storage.Tx] = (*storage.Store)(nil)
)
