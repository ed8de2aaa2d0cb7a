// Package ogg reads and writes the little of Ogg/Opus that voice notes need: the length
// of a recording (from the granule position of its last page, RFC 7845) and a valid
// recording of silence for the fakes to speak with. It imports nothing of the module, so
// speech (brain/speech) and the fakes of channels (telegramtest) both may import it;
// it lived under brain/cognition, which a fake had to reach into.
package ogg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// opusRate is the rate of an Ogg/Opus granule position: 48 kHz, whatever the input's.
const opusRate = 48000

// maxSamples bounds a recording's length (a day), so that its duration cannot overflow.
const maxSamples = 24 * 3600 * opusRate

// headerLen is an Ogg page header's length before its segment table.
const headerLen = 27

// ErrNotOpus is returned (wrapped) for data that is not an Ogg/Opus stream.
var ErrNotOpus = errors.New("not an Ogg/Opus stream")

// Duration returns the length of the Ogg/Opus recording data: the granule position of its
// last page less the pre-skip of its OpusHead, at 48 kHz. Every page's checksum is
// checked. Errors wrap ErrNotOpus.
func Duration(data []byte) (time.Duration, error) {
	var (
		serial     uint32
		preSkip    uint64
		last       int64 = -1
		pages      int
		headerSeen bool
	)
	for len(data) > 0 {
		p, rest, err := page(data)
		if err != nil {
			return 0, fmt.Errorf("%w: page %d: %w", ErrNotOpus, pages, err)
		}
		data = rest
		if pages == 0 {
			if !bytes.HasPrefix(p.body, []byte("OpusHead")) || len(p.body) < 19 {
				return 0, fmt.Errorf("%w: the first page has no OpusHead", ErrNotOpus)
			}
			serial, preSkip, headerSeen = p.serial, uint64(binary.LittleEndian.Uint16(p.body[10:12])), true
		} else if pages >= 2 && p.serial == serial && p.granule >= 0 { // after OpusHead and OpusTags
			last = p.granule
		}
		pages++
	}
	if !headerSeen || last < 0 {
		return 0, fmt.Errorf("%w: no audio pages", ErrNotOpus)
	}
	samples := uint64(last)
	if samples < preSkip {
		return 0, nil
	}
	samples -= preSkip
	if samples > maxSamples {
		return 0, fmt.Errorf("%w: granule position %d is past a day", ErrNotOpus, last)
	}
	return time.Duration(samples) * time.Second / opusRate, nil
}

// oggPage is one page: its stream, granule position (-1: no packet ends on it) and body.
type oggPage struct {
	serial  uint32
	granule int64
	body    []byte
}

// page reads the page at the start of data and returns it with what follows.
func page(data []byte) (oggPage, []byte, error) {
	if len(data) < headerLen || string(data[:4]) != "OggS" {
		return oggPage{}, nil, errors.New("no capture pattern")
	}
	if data[4] != 0 {
		return oggPage{}, nil, fmt.Errorf("version %d", data[4])
	}
	n := int(data[26])
	if len(data) < headerLen+n {
		return oggPage{}, nil, errors.New("truncated segment table")
	}
	size := 0
	for _, s := range data[headerLen : headerLen+n] {
		size += int(s)
	}
	end := headerLen + n + size
	if len(data) < end {
		return oggPage{}, nil, errors.New("truncated page")
	}
	want := binary.LittleEndian.Uint32(data[22:26])
	if got := checksum(data[:end]); got != want {
		return oggPage{}, nil, fmt.Errorf("checksum %08x, want %08x", got, want)
	}
	return oggPage{
		serial:  binary.LittleEndian.Uint32(data[14:18]),
		granule: int64(binary.LittleEndian.Uint64(data[6:14])),
		body:    data[headerLen+n : end],
	}, data[end:], nil
}

// crcTable is Ogg's CRC-32: polynomial 0x04c11db7, not reflected, initial value 0.
var crcTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

// checksum is the CRC of a page with its checksum field taken as zero.
func checksum(p []byte) uint32 {
	var crc uint32
	for i, b := range p {
		if i >= 22 && i < 26 {
			b = 0
		}
		crc = crc<<8 ^ crcTable[byte(crc>>24)^b]
	}
	return crc
}
