// Package stream declares RabbitMQ streams and reads them (section 15 of
// the family's contract): an append-only log that consumers read without
// taking anything from it, each from an offset of its choice.
//
// A stream is declared with x-queue-type stream, its retention in x-max-age
// rendered in the largest whole unit (7D, 6h, 30m, 45s: contract.RenderMaxAge),
// as the Go, Python and Ruby libraries render it, and x-max-length-bytes as
// a long; x-stream-max-segment-size-bytes only when asked for. Java and
// .NET render the same retention in seconds (604800s): up to RabbitMQ 4.2,
// which compares x-max-age as text, a stream one of them declared is
// PRECONDITION_FAILED here, and the other way round; 4.3 compares the
// duration and accepts either (docs/streams.md).
//
// Consume reads from an Offset (First, Last, Next, At, Since, Interval)
// with a prefetch (10 unless asked), hands each message to the handler
// with its offset (the delivery's x-stream-offset), acknowledges it (on a
// stream that only lets the broker send more) and, after a lost
// connection, resumes after the last offset handled. A stream has no retry
// ladder: a failure stops the consumer (Stop, the default), or is copied
// to S.dlq and passed over (Skip). It never nacks: RabbitMQ 3.10 closes the
// whole connection on a stream's nack or reject (540 NOT_IMPLEMENTED). The
// consumer is an acemq consumer underneath (acemq.WithAppendOnly), its
// handler returns an acemq.Decision, and the Conn's observer, metrics and
// logs see its deliveries as any consumer's.
//
// memory:// has streams as RabbitMQ has them (the same tests run on both).
package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Spec is a stream to declare.
type Spec struct {
	Name string
	// MaxAge is how long the stream keeps a message (x-max-age), in whole
	// seconds; 0 is for ever. RabbitMQ removes whole segments only, once
	// every message in one is older.
	MaxAge time.Duration
	// MaxLengthBytes bounds the stream's size (x-max-length-bytes), 0 for
	// no bound; RabbitMQ removes the oldest segments to keep it.
	MaxLengthBytes int64
	// MaxSegmentSizeBytes is the size of its segment files
	// (x-stream-max-segment-size-bytes), sent only when not 0; RabbitMQ's
	// default is 500 MB.
	MaxSegmentSizeBytes int64
}

// Validate says what is wrong with the spec.
func (s Spec) Validate() error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, errors.New("the stream has no name"))
	}
	if s.MaxAge < 0 || s.MaxAge > 0 && s.MaxAge < time.Second {
		errs = append(errs, fmt.Errorf("the maximum age is %s; want 0 (for ever) or at least 1s", s.MaxAge))
	}
	if s.MaxLengthBytes < 0 {
		errs = append(errs, fmt.Errorf("the maximum length is %d bytes; want 0 (no bound) or more", s.MaxLengthBytes))
	}
	if s.MaxSegmentSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("the segment size is %d bytes; want 0 (RabbitMQ's default) or more", s.MaxSegmentSizeBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stream: %s: %w", s.Name, err)
	}
	return nil
}

// Arguments are the stream's queue arguments, x-queue-type aside.
func (s Spec) Arguments() transport.Table {
	args := transport.Table{}
	if age, ok := contract.RenderMaxAge(s.MaxAge); ok {
		args[contract.ArgMaxAge] = age
	}
	if s.MaxLengthBytes > 0 {
		args[contract.ArgMaxLengthBytes] = s.MaxLengthBytes
	}
	if s.MaxSegmentSizeBytes > 0 {
		args[contract.ArgMaxSegmentSize] = s.MaxSegmentSizeBytes
	}
	return args
}

// QueueSpec is the stream as a queue of an acemq.Topology.
func (s Spec) QueueSpec() acemq.QueueSpec {
	return acemq.QueueSpec{Name: s.Name, Type: transport.Stream, Arguments: s.Arguments()}
}

// Declare validates the spec and declares the stream.
func (s Spec) Declare(ctx context.Context, c *acemq.Conn) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return acemq.Topology{Queues: []acemq.QueueSpec{s.QueueSpec()}}.Apply(ctx, c)
}
