package bot

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/memory/memorytest"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

// TestAssembleMigratesAnOldIndex: `anima run`, `anima chat` and the simulator build
// memory through Assemble, so a store whose search index storage.Open marked owed an
// upgrade (here a schema-3 tail key) is migrated before anything reads it: the turn's
// history entry is marked, the old key is gone, the mark is settled, and search finds it.
func TestAssembleMigratesAnOldIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	const chat = 5
	st := storagetest.Open(t, path)
	if _, err := st.CommitTurn(storage.Commit{Chat: chat, Turns: []brain.Turn{{Role: "user", Text: "my kitten is called Miso", At: at}}}, at); err != nil {
		t.Fatal(err)
	}
	turns, err := st.History(chat, 0)
	if err != nil || len(turns) != 1 {
		t.Fatalf("history = %+v, %v", turns, err)
	}
	tail := memorytest.TailKey(chat, turns[0].Seq)
	memorytest.OweIndexUpgrade(t, st, chat, turns[0].Seq)

	st = storagetest.Open(t, path)
	cfg := config.Default()
	cfg.LLM.BaseURL = openaitest.New(t).URL()
	cfg.LLM.APIKey = "test-key"
	cfg.Storage.Path = path
	parts, err := Assemble(cfg, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = st.View(func(tx *storage.Tx) error {
		if v, err := tx.GetRaw(brain.BucketIndex, tail); err != nil || v != nil {
			t.Errorf("schema-3 tail key left: %q, %v", v, err)
		}
		var marked bool
		err := tx.HistoryFrom(chat, 0, func(_, v []byte) error {
			_, marked, err = brain.DecodeHistory(v)
			return err
		})
		if err != nil || !marked {
			t.Errorf("the turn's history entry is not marked indexed: %v", err)
		}
		if from, ok, err := tx.Owed(brain.PartIndex); err != nil || ok {
			t.Errorf("Owed = %d, %v, %v after Assemble; want settled", from, ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := parts.Memory.Search(chat, chat, "kitten", 3); err != nil || len(hits) != 1 {
		t.Errorf("hits = %+v, %v; want the migrated turn", hits, err)
	}
}

// TestLoopConfigLogReplies: log.replies (default on) gives the service one INFO line per
// reply; false quiets it, and `anima chat`, whose operator reads each reply, has none.
func TestLoopConfigLogReplies(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	for _, tc := range []struct {
		name    string
		replies bool
		console bool
		want    bool
	}{
		{"service", true, false, true},
		{"service, log.replies false", false, false, false},
		{"console", true, true, false},
	} {
		cfg.Log.Replies = tc.replies
		if got := LoopConfig(cfg, tc.console).LogReplies; got != tc.want {
			t.Errorf("%s: LogReplies %v, want %v", tc.name, got, tc.want)
		}
	}
	if !config.Default().Log.Replies {
		t.Error("log.replies is off by default, want on")
	}
}

// TestAnswerFormatResolved: llm.answer_format auto asks for the json_schema format of
// OpenAI's own API only; json_schema and text are taken as said.
func TestAnswerFormatResolved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, base string
		want         bool
	}{
		{"auto", "https://api.openai.com/v1", true},
		{"auto", "https://API.OpenAI.com:443/v1", true},
		{"auto", "http://127.0.0.1:11434/v1", false},
		{"auto", "https://openrouter.ai/api/v1", false},
		{"json_schema", "http://127.0.0.1:11434/v1", true},
		{"text", "https://api.openai.com/v1", false},
	}
	for _, tc := range tests {
		if got := answerFormat(config.LLMConfig{AnswerFormat: tc.format, BaseURL: tc.base}); got != tc.want {
			t.Errorf("answer_format %s at %s: %v, want %v", tc.format, tc.base, got, tc.want)
		}
	}
}
