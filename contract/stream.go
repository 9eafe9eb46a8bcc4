package contract

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Streams (section 15).
const (
	// ArgMaxLengthBytes (arguments.go) bounds a stream in bytes, a long.
	// ArgMaxSegmentSize is the size of a stream's segment files, sent only
	// when asked for.
	ArgMaxSegmentSize = "x-stream-max-segment-size-bytes"
	// ArgStreamOffset is the consumer argument that says where a stream
	// consumer starts, and the header of each delivery giving its offset.
	ArgStreamOffset = "x-stream-offset"
	// The named offsets of x-stream-offset.
	StreamOffsetFirst = "first"
	StreamOffsetLast  = "last"
	StreamOffsetNext  = "next"
	// DefaultStreamPrefetch is a stream consumer's prefetch when it asks
	// for none (RabbitMQ refuses a stream consumer without one), as Go,
	// Python and Ruby have it.
	DefaultStreamPrefetch = 10
)

// maxAgeUnits are x-max-age's units, as RabbitMQ counts them: a month is
// 30 days, a year 365.
var maxAgeUnits = map[byte]time.Duration{'Y': 365 * 24 * time.Hour, 'M': 30 * 24 * time.Hour, 'D': 24 * time.Hour,
	'h': time.Hour, 'm': time.Minute, 's': time.Second}

// ParseMaxAge reads x-max-age as RabbitMQ takes it: a positive whole
// number (leading zeros allowed) of years, months, days, hours, minutes or
// seconds, such as "7D" or "604800s". ok is false for anything else, and
// for an age too long for a time.Duration.
func ParseMaxAge(s string) (d time.Duration, ok bool) {
	if len(s) < 2 {
		return 0, false
	}
	unit, found := maxAgeUnits[s[len(s)-1]]
	digits := s[:len(s)-1]
	if !found || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || n > int64(math.MaxInt64/unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// RenderMaxAge writes a stream's retention as x-max-age in the largest
// whole unit of D, h, m and s, as the Go, Python and Ruby libraries do:
// 7 days is "7D", 36 hours "36h", 90 seconds "90s". It is whole seconds,
// truncated; ok is false below one second, which RabbitMQ cannot keep.
// Java and .NET write seconds ("604800s"): RabbitMQ compares the text, so
// a stream declared in one rendering is PRECONDITION_FAILED in the other.
func RenderMaxAge(d time.Duration) (s string, ok bool) {
	secs := int64(d / time.Second)
	switch {
	case secs <= 0:
		return "", false
	case secs%86400 == 0:
		return strconv.FormatInt(secs/86400, 10) + "D", true
	case secs%3600 == 0:
		return strconv.FormatInt(secs/3600, 10) + "h", true
	case secs%60 == 0:
		return strconv.FormatInt(secs/60, 10) + "m", true
	}
	return strconv.FormatInt(secs, 10) + "s", true
}
