package pluginstest_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

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

// TestValue: Value reads a counter or a gauge by its labels, any of them or all, and fails
// the test when no series has them.
func TestValue(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	errs := promauto.With(reg).NewCounterVec(prometheus.CounterOpts{Name: "errors_total", Help: "h"}, []string{"plugin", "part"})
	errs.WithLabelValues("greeter", "tool").Add(2)
	errs.WithLabelValues("greeter", "state").Inc()
	promauto.With(reg).NewGauge(prometheus.GaugeOpts{Name: "open", Help: "h"}).Set(7)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
		fails  bool
	}{
		{"errors_total", []string{"plugin", "greeter", "part", "state"}, 1, false},
		{"errors_total", []string{"part", "tool"}, 2, false},
		{"open", nil, 7, false},
		{"errors_total", []string{"part", "neuron"}, 0, true},
		{"absent_total", nil, 0, true},
	} {
		rec := &fatalRecorder{TB: t}
		if got := pluginstest.Value(rec, reg, tc.name, tc.labels...); got != tc.want || rec.failed != tc.fails {
			t.Errorf("Value(%s, %q) = %v, failed %v; want %v, failed %v", tc.name, tc.labels, got, rec.failed, tc.want, tc.fails)
		}
	}
}

// fatalRecorder notes a Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (r *fatalRecorder) Helper()               {}
func (r *fatalRecorder) Fatalf(string, ...any) { r.failed = true }
