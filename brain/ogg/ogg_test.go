package ogg

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"
)

func TestSilenceDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   time.Duration
		want time.Duration
	}{
		{"one frame", 0, 20 * time.Millisecond},
		{"not whole frames", 30 * time.Millisecond, 30 * time.Millisecond},
		{"a second", time.Second, time.Second},
		{"over a page", 2500 * time.Millisecond, 2500 * time.Millisecond},
		{"a minute", time.Minute, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Duration(Silence(tc.in))
			if err != nil || got != tc.want {
				t.Fatalf("Duration(Silence(%v)) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
	if !bytes.Equal(Silence(time.Second), Silence(time.Second)) {
		t.Fatal("Silence is not deterministic")
	}
}

// TestFixture pins the fixture the fakes serve to what Silence makes (testdata/README
// says how it was checked with opusinfo).
func TestFixture(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/silence-1500ms.opus")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, Silence(1500*time.Millisecond)) {
		t.Fatal("testdata/silence-1500ms.opus differs from Silence(1.5s): regenerate it (go test -run TestFixture -update) and check it with opusinfo")
	}
	if d, err := Duration(data); err != nil || d != 1500*time.Millisecond {
		t.Fatalf("Duration = %v, %v; want 1.5s", d, err)
	}
}

func TestDurationRefuses(t *testing.T) {
	t.Parallel()
	good := Silence(time.Second)
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-1] ^= 0xFF
	vorbis := bytes.Clone(good)
	copy(vorbis[28:], "OpusHeaX") // the first page's body
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"mp3", []byte("ID3\x04\x00\x00\x00\x00\x00\x00")},
		{"truncated", good[:len(good)-2]},
		{"bad checksum", corrupt},
		{"not opus", vorbis},
		{"headers only", firstPages(t, good, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if d, err := Duration(tc.data); !errors.Is(err, ErrNotOpus) {
				t.Fatalf("Duration = %v, %v; want ErrNotOpus", d, err)
			}
		})
	}
}

func FuzzDuration(f *testing.F) {
	f.Add(Silence(time.Second))
	f.Add([]byte("OggS"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Duration(data)
		if err == nil && d < 0 {
			t.Fatalf("negative duration %v", d)
		}
	})
}

// firstPages is the first n pages of data.
func firstPages(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	rest := data
	for range n {
		var err error
		if _, rest, err = page(rest); err != nil {
			t.Fatal(err)
		}
	}
	return data[:len(data)-len(rest)]
}
