package pluginstest_test

import (
	"errors"
	"testing"

	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// TestBucket: Put keeps a copy, Scan walks the prefix in key order and stops on an
// error, Delete forgets, OnCommit runs at once.
func TestBucket(t *testing.T) {
	t.Parallel()
	b := pluginstest.Bucket{}
	v := []byte("one")
	for _, k := range []string{"a:2", "b:1", "a:1"} {
		if err := b.Put([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	v[0] = 'X'
	if got := string(b.Get([]byte("a:1"))); got != "one" {
		t.Fatalf("Get(a:1) = %q after the caller's slice changed, want %q", got, "one")
	}
	var keys []string
	if err := b.Scan([]byte("a:"), func(k, _ []byte) error { keys = append(keys, string(k)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != "a:1" || keys[1] != "a:2" {
		t.Fatalf("Scan(a:) = %q, want [a:1 a:2]", keys)
	}
	stop := errors.New("stop")
	n := 0
	if err := b.Scan(nil, func(_, _ []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Scan with a failing fn: err %v after %d calls, want stop after 1", err, n)
	}
	if err := b.Delete([]byte("a:1")); err != nil || b.Get([]byte("a:1")) != nil {
		t.Fatalf("Delete(a:1): err %v, value %q left", err, b.Get([]byte("a:1")))
	}
	ran := false
	b.OnCommit(func() { ran = true })
	if !ran {
		t.Fatal("OnCommit did not run its function")
	}
}

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
