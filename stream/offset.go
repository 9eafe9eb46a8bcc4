package stream

import (
	"fmt"
	"strconv"
	"time"

	"github.com/acemq-go/acemq/contract"
)

// Offset is where a consumer starts reading: its x-stream-offset. The zero
// Offset is Next.
type Offset struct {
	kind  offsetKind
	n     int64
	since time.Time
	ago   time.Duration
}

type offsetKind uint8

const (
	next offsetKind = iota
	first
	last
	absolute
	timestamp
	interval
)

// First is the oldest message the stream still has.
func First() Offset { return Offset{kind: first} }

// Last is the last chunk the stream wrote: its last message, and the
// messages written in one batch with it.
func Last() Offset { return Offset{kind: last} }

// Next is what the stream is sent from now on (the default).
func Next() Offset { return Offset{kind: next} }

// At is the message at offset n (from 0), or the oldest one kept when n is
// older than that.
func At(n int64) Offset { return Offset{kind: absolute, n: n} }

// Since is the first chunk written at t or later, sent as an AMQP
// timestamp (whole seconds).
func Since(t time.Time) Offset { return Offset{kind: timestamp, since: t} }

// Interval is the first chunk written in the last d, sent as "<n>s" (whole
// seconds).
func Interval(d time.Duration) Offset { return Offset{kind: interval, ago: d} }

// validate refuses what RabbitMQ would take badly: a bad x-stream-offset
// is an INTERNAL_ERROR that closes the whole connection.
func (o Offset) validate() error {
	switch {
	case o.kind == absolute && o.n < 0:
		return fmt.Errorf("the offset %d is negative", o.n)
	case o.kind == timestamp && o.since.Unix() < 0:
		return fmt.Errorf("the timestamp %s is before 1970", o.since)
	case o.kind == interval && o.ago < time.Second:
		return fmt.Errorf("the interval %s is under a second", o.ago)
	}
	return nil
}

// argument is the x-stream-offset value.
func (o Offset) argument() any {
	switch o.kind {
	case first:
		return contract.StreamOffsetFirst
	case last:
		return contract.StreamOffsetLast
	case absolute:
		return o.n
	case timestamp:
		// amqp091 sends a time.Time as an AMQP timestamp, whole seconds.
		return o.since.Truncate(time.Second)
	case interval:
		return strconv.FormatInt(int64(o.ago/time.Second), 10) + "s"
	}
	return contract.StreamOffsetNext
}

// String is the offset as x-stream-offset carries it.
func (o Offset) String() string {
	if o.kind == timestamp {
		return o.since.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	return fmt.Sprint(o.argument())
}
