package brain

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// HourWeights are a Rhythm's decayed message counts, one per hour of the week. They are
// stored compactly (every relationship holds them, and a flush rewrites them): a string of
// base64 holding a bit per hour that has weight, then those hours' float32 bits, little
// endian — exact, and about a third of the JSON array of 168 numbers a profile was stored
// as before (which still decodes).
type HourWeights [hoursPerWeek]float32

// hourMaskBytes is the bitmap of the hours with weight.
const hourMaskBytes = (hoursPerWeek + 7) / 8

// MarshalJSON writes the compact form.
func (w HourWeights) MarshalJSON() ([]byte, error) {
	buf := make([]byte, hourMaskBytes, hourMaskBytes+4*hoursPerWeek)
	for h, v := range w {
		if v != 0 {
			buf[h/8] |= 1 << (h % 8)
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return json.Marshal(base64.RawStdEncoding.EncodeToString(buf))
}

var errHourWeights = errors.New("hour weights: want a base64 string or an array of 168 numbers")

// UnmarshalJSON reads the compact form or the array of 168 numbers stored before it.
func (w *HourWeights) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var a [hoursPerWeek]float32
		if err := json.Unmarshal(b, &a); err != nil {
			return fmt.Errorf("%w: %w", errHourWeights, err)
		}
		*w = a
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w: %w", errHourWeights, err)
	}
	buf, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil || len(buf) < hourMaskBytes {
		return errHourWeights
	}
	mask, vals := buf[:hourMaskBytes], buf[hourMaskBytes:]
	var out HourWeights
	for h := range hoursPerWeek {
		if mask[h/8]&(1<<(h%8)) == 0 {
			continue
		}
		if len(vals) < 4 {
			return errHourWeights
		}
		out[h] = math.Float32frombits(binary.LittleEndian.Uint32(vals))
		vals = vals[4:]
	}
	if len(vals) != 0 {
		return errHourWeights
	}
	*w = out
	return nil
}
