// Package lenient reads AMQP header values as every AceMQ library does:
// leniently, whatever width or type the writer chose, and an unreadable
// value as absent. The root package and package deadletter share it.
package lenient

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Valid is s, or "" when s is not valid UTF-8.
func Valid(s string) string {
	if !utf8.ValidString(s) {
		return ""
	}
	return s
}

// String reads a string header: a string or []byte holding valid UTF-8.
// Anything else reads as "", which callers treat as absent.
func String(v any) string {
	switch v := v.(type) {
	case string:
		return Valid(v)
	case []byte:
		return Valid(string(v))
	}
	return ""
}

// Count reads a header counting from 1 (version, attempt): anything
// unreadable or below 1 reads as 1.
func Count(v any) int {
	n, ok := Int(v)
	if !ok || n < 1 {
		return 1
	}
	return n
}

// Millis reads an epoch-milliseconds header. The zero time means
// missing, unreadable or not after 1970. An AMQP timestamp is accepted too.
func Millis(v any) time.Time {
	if t, ok := v.(time.Time); ok {
		return CutToMillis(t)
	}
	ms, ok := Int(v)
	if !ok {
		return time.Time{}
	}
	return CutToMillis(time.UnixMilli(int64(ms)))
}

// CutToMillis is t in UTC cut to the millisecond, as the first-seen header
// carries it, or the zero time when t is not after 1970.
func CutToMillis(t time.Time) time.Time {
	ms := t.UnixMilli()
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// Int reads an integer of any Go width, an integral float or a decimal
// string with optional surrounding spaces. Values outside int are unreadable.
func Int(v any) (int, bool) {
	switch v := v.(type) {
	case int:
		return v, true
	case int8:
		return int(v), true
	case int16:
		return int(v), true
	case int32:
		return int(v), true
	case int64:
		return fitInt(v)
	case uint:
		return fitUint(uint64(v))
	case uint8:
		return int(v), true
	case uint16:
		return int(v), true
	case uint32:
		return fitUint(uint64(v))
	case uint64:
		return fitUint(v)
	case float32:
		return fitFloat(float64(v))
	case float64:
		return fitFloat(v)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, false
		}
		return fitInt(n)
	case []byte:
		return Int(string(v))
	}
	return 0, false
}

func fitInt(n int64) (int, bool) {
	if n < math.MinInt || n > math.MaxInt {
		return 0, false
	}
	return int(n), true
}

func fitUint(n uint64) (int, bool) {
	if n > math.MaxInt {
		return 0, false
	}
	return int(n), true
}

func fitFloat(f float64) (int, bool) {
	// 2^63 is exact as a float64; NaN fails every comparison.
	if !(f >= -(1<<63) && f < 1<<63) || f != math.Trunc(f) {
		return 0, false
	}
	return fitInt(int64(f))
}
