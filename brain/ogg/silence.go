package ogg

import (
	"encoding/binary"
	"time"
)

// silentFrame is a 20 ms Opus packet of silence: TOC 0xF8 (CELT-only, fullband, 20 ms,
// mono, one frame) and two bytes a decoder reads as silence.
var silentFrame = []byte{0xF8, 0xFF, 0xFE}

// frameSamples is a 20 ms frame at 48 kHz.
const frameSamples = opusRate / 50

// preSkip is what opusenc writes: the samples a decoder drops at the start.
const preSkip = 312

// framesPerPage puts a second of audio on a page.
const framesPerPage = 50

// Silence returns a valid Ogg/Opus recording of d of silence (whole 48 kHz samples, at
// least 20 ms): an OpusHead page, an OpusTags page and pages of silent 20 ms frames, each
// with its checksum, laid out as opusenc does — the frames cover the pre-skip and d, and
// the last page's granule position trims the end to d. It is the same for the same d.
func Silence(d time.Duration) []byte {
	samples := max(frameSamples, int(d*opusRate/time.Second))
	frames := (preSkip + samples + frameSamples - 1) / frameSamples
	const serial = 0x616e696d // "anim"
	head := make([]byte, 19)
	copy(head, "OpusHead")
	head[8] = 1 // version
	head[9] = 1 // mono
	binary.LittleEndian.PutUint16(head[10:], preSkip)
	binary.LittleEndian.PutUint32(head[12:], opusRate)
	vendor := "anima ogg.Silence"
	tags := make([]byte, 0, 16+len(vendor))
	tags = append(tags, "OpusTags"...)
	tags = binary.LittleEndian.AppendUint32(tags, uint32(len(vendor)))
	tags = append(tags, vendor...)
	tags = binary.LittleEndian.AppendUint32(tags, 0)

	out := appendPage(nil, 0x02, 0, serial, 0, [][]byte{head})
	out = appendPage(out, 0, 0, serial, 1, [][]byte{tags})
	seq := uint32(2)
	for done := 0; done < frames; seq++ {
		n := min(framesPerPage, frames-done)
		packets := make([][]byte, n)
		for i := range packets {
			packets[i] = silentFrame
		}
		done += n
		flags, granule := byte(0), uint64(done*frameSamples)
		if done == frames {
			flags, granule = 0x04, uint64(preSkip+samples) // end of stream, trimmed to d
		}
		out = appendPage(out, flags, granule, serial, seq, packets)
	}
	return out
}

// appendPage appends a page holding whole packets (each under 255 bytes) to out.
func appendPage(out []byte, flags byte, granule uint64, serial, seq uint32, packets [][]byte) []byte {
	start := len(out)
	out = append(out, "OggS"...)
	out = append(out, 0, flags)
	out = binary.LittleEndian.AppendUint64(out, granule)
	out = binary.LittleEndian.AppendUint32(out, serial)
	out = binary.LittleEndian.AppendUint32(out, seq)
	out = append(out, 0, 0, 0, 0) // checksum, below
	out = append(out, byte(len(packets)))
	for _, p := range packets {
		out = append(out, byte(len(p)))
	}
	for _, p := range packets {
		out = append(out, p...)
	}
	binary.LittleEndian.PutUint32(out[start+22:], checksum(out[start:]))
	return out
}
