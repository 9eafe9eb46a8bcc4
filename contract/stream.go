package contract

import (
	"strconv"
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
