// Package pluginstest holds fakes for testing plugins and the code that hosts them: a
// plugins.Bucket over a map, in place of a store transaction, and a plugins.Store of them;
// and Value, which reads what a plugin counted from its registry.
package pluginstest

import (
	"bytes"
	"slices"
	"strings"

	"github.com/anima-bot/anima/plugins"
)

var _ plugins.Bucket = Bucket(nil)

// Bucket is an in-memory plugins.Bucket whose transactions always commit: OnCommit runs
// its function at once. Put keeps a copy of the value. The zero value is nil and cannot
// be written; make one with Bucket{}.
type Bucket map[string][]byte

// Get returns the value under k, nil if absent.
func (b Bucket) Get(k []byte) []byte { return b[string(k)] }

// Put stores a copy of v under k.
func (b Bucket) Put(k, v []byte) error { b[string(k)] = bytes.Clone(v); return nil }

// Delete removes k; a missing key is no error.
func (b Bucket) Delete(k []byte) error { delete(b, string(k)); return nil }

// OnCommit runs fn at once: the fake's transactions always commit.
func (b Bucket) OnCommit(fn func()) { fn() }

// Scan calls fn for every key with prefix, in key order; an error from fn stops it and
// is returned.
func (b Bucket) Scan(prefix []byte, fn func(k, v []byte) error) error {
	keys := make([]string, 0, len(b))
	for k := range b {
		if strings.HasPrefix(k, string(prefix)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn([]byte(k), b[k]); err != nil {
			return err
		}
	}
	return nil
}
