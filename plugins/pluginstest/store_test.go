package pluginstest_test

import (
	"testing"

	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// TestStoreErase: Update makes a plugin's bucket; Erase reports a deletion only when a
// key that was there went.
func TestStoreErase(t *testing.T) {
	t.Parallel()
	s := pluginstest.Store{}
	if err := s.Update("p", func(b plugins.Bucket) error { return b.Put([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{{"missing", false}, {"k", true}, {"k", false}} {
		erased, err := s.Erase("p", func(b plugins.Bucket) error { return b.Delete([]byte(tc.key)) })
		if err != nil || erased != tc.want {
			t.Errorf("Erase deleting %q: %v, %v; want %v", tc.key, erased, err, tc.want)
		}
	}
	var got []byte
	if err := s.View("p", func(b plugins.Bucket) error { got = b.Get([]byte("k")); return nil }); err != nil || got != nil {
		t.Errorf("after Erase, k = %q (%v)", got, err)
	}
}
