package deadletter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// Options shape a move (Replay, Park) or an Export.
type Options struct {
	// Limit moves at most this many messages; 0 moves every one.
	Limit int
	// Match selects the messages to move; nil selects every one. The others
	// stay where they are.
	Match *Matcher
	// Rate bounds the moves per second; 0 is as fast as the broker confirms.
	Rate float64
	// DryRun goes through the queue as a move would and counts what it
	// would move, but moves nothing.
	DryRun bool
	// Progress, when set, is told after each message taken.
	Progress func(Progress)
	// Doubtful, when set, is told the Identity of each message counted in
	// Progress.Doubtful: those that may be in both places, by name.
	Doubtful func(identity string)
	// Now is the clock for acemq-replayed-at and ages; nil is time.Now.
	Now func() time.Time
}

// clock is o.Now, or time.Now without one.
func (o Options) clock() func() time.Time {
	if o.Now != nil {
		return o.Now
	}
	return time.Now
}

// Progress counts a move's messages so far; at the end it is the result.
type Progress struct {
	// Total is how many messages the queue held when the move started: no
	// more than these are taken.
	Total int
	// Taken from the queue so far.
	Taken int
	// Moved: confirmed at their target (or written to the file) and removed
	// from the queue; in a dry run, those that would be; in an Export that
	// keeps them, those written.
	Moved int
	// Left where they were: not matching, a dry run, or their move failed.
	Left int
	// Doubtful: sent to the target, but the broker's answer or the
	// acknowledgement of the original was lost with the connection. Each
	// may now be in both places; none is in neither. After a lost
	// connection a few more may be in both: AMQP does not confirm
	// acknowledgements, and those sent as the connection went are lost.
	Doubtful int
}

// Replay moves the messages of from (a Q.dlq or Q.parked) back to the queue
// to, or to from's source queue when to is "", for their handlers to try
// again: attempt 1, the first-seen time kept, x-acemq-error removed, and the
// replay headers of CONTRACT.md section 6 set (from, at, count one higher).
// Everything else travels byte for byte.
func Replay(ctx context.Context, c *acemq.Conn, from, to string, o Options) (Progress, error) {
	if to == "" {
		source, ok := Source(from)
		if !ok {
			return Progress{}, fmt.Errorf("replay from %s: %w: its name ends in neither .dlq nor .parked; name the queue to replay into", from, ErrNoSource)
		}
		to = source
	}
	now := o.clock()
	return move(ctx, c, from, to, o, func(m *acemq.RawMessage) {
		m.Persistent = true
		h := maps.Clone(m.Headers)
		if h == nil {
			h = acemq.Table{}
		}
		h[contract.HeaderAttempt] = int64(1)
		delete(h, contract.HeaderError)
		Replayed{From: from, At: now(), Count: ReadReplayed(h).Count + 1}.Write(h)
		m.Headers = h
	})
}

// Park moves the messages of a dead-letter queue Q.dlq to Q.parked,
// unchanged: they are kept aside for a person, out of the way of replays of
// the dead-letter queue.
func Park(ctx context.Context, c *acemq.Conn, from string, o Options) (Progress, error) {
	source, ok := Source(from)
	if !ok || !IsDeadLetterQueue(from) {
		return Progress{}, fmt.Errorf("park from %s: only a dead-letter queue (a name ending in .dlq) is parked", from)
	}
	return move(ctx, c, from, contract.ParkedQueue(source), o, func(m *acemq.RawMessage) { m.Persistent = true })
}

// move moves from's messages to the queue to, rewriting each with rewrite.
func move(ctx context.Context, c *acemq.Conn, from, to string, o Options, rewrite func(*acemq.RawMessage)) (Progress, error) {
	if from == to {
		return Progress{}, fmt.Errorf("move %s to %s: %w", from, to, ErrSameQueue)
	}
	// A publish to a missing queue would only come back unroutable after
	// the first message was taken: say so before taking any.
	if err := mustExist(ctx, c, to); err != nil {
		return Progress{}, fmt.Errorf("move %s to %s: %w", from, to, err)
	}
	p, err := fromQueue(ctx, c, from, o, &brokerSink{c: c, queue: to, rewrite: rewrite}, false)
	if err != nil {
		return p, fmt.Errorf("move %s to %s: %w", from, to, err)
	}
	return p, nil
}

// mustExist fails, saying what to do, when queue does not exist.
func mustExist(ctx context.Context, c *acemq.Conn, queue string) error {
	_, err := c.InspectQueue(ctx, queue)
	if errors.Is(err, acemq.ErrNotFound) {
		return fmt.Errorf("the queue %s does not exist; declare it first (acemq topology apply): %w", queue, err)
	}
	return err
}

// brokerSink republishes to a queue through the Conn, mandatory, confirmed
// and observed, as every AceMQ republish is.
type brokerSink struct {
	c       *acemq.Conn
	queue   string
	rewrite func(*acemq.RawMessage)
}

func (s *brokerSink) send(ctx context.Context, m acemq.RawMessage) answer {
	s.rewrite(&m)
	p, err := s.c.Republish(ctx, s.queue, m)
	if err != nil {
		// Republish fails only before the message is written: it is not sent.
		c, resolve := transport.NewConfirmation()
		resolve(fmt.Errorf("%w: %w", errNotSent, err))
		return c
	}
	return p
}

// flush has nothing to do: the broker confirms by itself.
func (s *brokerSink) flush() {}
