// Package memorytest holds what tests of memory and of its users share: a store left as
// an older anima left it, for the index migration to find.
package memorytest

import (
	"strconv"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// OweIndexUpgrade leaves st as schema 3 left a store whose turns of chat with seqs were
// indexed but not yet folded: one tail key per turn (an empty value: read the turn from
// history) and the schema mark 3, so that memory built on it owes the index its upgrade.
// It closes st; the test reopens the file.
func OweIndexUpgrade(tb testing.TB, st *storage.Store, chat int64, seqs ...uint64) {
	tb.Helper()
	Leave(tb, st, 3, func(tx *storage.Tx) error {
		for _, seq := range seqs {
			if err := tx.PutRaw(brain.BucketIndex, TailKey(chat, seq), []byte{}); err != nil {
				return err
			}
		}
		return nil
	})
}

// Leave leaves st as an older anima of schema left it: write puts what that anima kept
// (index keys in their old layout, say) and the store gets the schema mark, in one update.
// It closes st; the test reopens the file.
func Leave(tb testing.TB, st *storage.Store, schema int, write func(tx *storage.Tx) error) {
	tb.Helper()
	err := st.Update(func(tx *storage.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		return tx.PutRaw(storage.BucketMeta, []byte("schema"), strconv.AppendInt(nil, int64(schema), 10))
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TailKey is schema 3's index key for the unfolded turn seq of chat.
func TailKey(chat int64, seq uint64) []byte {
	return brain.Key(chat, []byte{'t'}, brain.U64(seq))
}
