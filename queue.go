package acemq

import "context"

// The Conn's operations on a queue, past publishing and consuming: what an
// operator's tool, a pattern or an example needs to read and tidy queues,
// without the driver SPI. What changes a queue is told to the Observer.
// Errors are the transport's, which name the queue; match them with
// errors.Is (ErrNotFound, ErrClosed).

// Get takes one message from queue, to be settled (Ack, Nack, Reject); ok is
// false when the queue is empty. A missing queue is an error matching
// ErrNotFound. RabbitMQ refuses it on a stream and on a quorum queue with
// single active consumer (a partition of a partition.Set, say): only a
// consumer reads those.
func (c *Conn) Get(ctx context.Context, queue string) (d RawDelivery, ok bool, err error) {
	return c.transport.Get(ctx, queue)
}

// Take opens a Taker on queue, for going through it a message at a time:
// what it takes stays with it, unacknowledged, until settled or until the
// Taker is closed, when the broker puts it back in its place. A Taker does
// not recover from a lost connection: Next then fails with
// ErrStaleDelivery, and the broker has put back what it held. Where Get is
// refused, Take succeeds and its first Next fails as Get does.
func (c *Conn) Take(ctx context.Context, queue string) (Taker, error) {
	return c.transport.Take(ctx, queue)
}

// InspectQueue reports queue's ready messages and consumers without
// changing it; a missing queue is an error matching ErrNotFound. Messages a
// quorum queue holds unconfirmed (an at-least-once rung's dead letters on
// their way home) are not ready, and not counted.
func (c *Conn) InspectQueue(ctx context.Context, queue string) (QueueState, error) {
	return c.transport.InspectQueue(ctx, queue)
}

// PurgeQueue removes every ready message of queue and says how many; the
// Observer is told (EventQueuePurged).
func (c *Conn) PurgeQueue(ctx context.Context, queue string) (int, error) {
	n, err := c.transport.PurgeQueue(ctx, queue)
	if err != nil {
		return 0, err
	}
	c.observer.Event(Event{Kind: EventQueuePurged, Conn: c, Queue: queue, Messages: n})
	return n, nil
}

// DeleteQueue deletes queue and says how many messages it held; the
// Observer is told (EventQueueDeleted).
func (c *Conn) DeleteQueue(ctx context.Context, queue string) (int, error) {
	n, err := c.transport.DeleteQueue(ctx, queue)
	if err != nil {
		return 0, err
	}
	c.observer.Event(Event{Kind: EventQueueDeleted, Conn: c, Queue: queue, Messages: n})
	return n, nil
}

// State reports the connection as it stands: open or reconnecting, blocked
// by a broker alarm, the broker's version and the last failure.
func (c *Conn) State() ConnState { return c.transport.State() }
