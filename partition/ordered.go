package partition

import (
	"context"
	"fmt"
	"slices"

	"github.com/acemq-go/acemq"
)

// Ordering says which partitions a consumer takes and how it retries.
type Ordering struct {
	// Partitions are the partitions to take (Set.Assigned shares them out
	// between members); nil takes them all.
	Partitions []int
	// Policy bounds the attempts and their waits (the zero policy is
	// acemq.NoRetry: a failure is dead-lettered at once). Every wait is
	// in the consumer, the partition held: a broker wait would put the
	// message behind those after it. Its broker wait threshold is not used.
	Policy acemq.RetryPolicy
}

// Consume takes the partitions of s that o names, each with a consumer of
// its own (acemq.Consume with opts) at concurrency 1, so that a partition's
// messages are handled one at a time, in the order they were published. h
// is a consumer's handler. A retry (acemq.Retry) is tried again at once in
// the same place, after the policy's wait (jittered as the contract jitters
// consumer waits), the attempt one higher on the Envelope the handler sees,
// while the rest of the partition waits behind it. When the policy gives up
// (or the error is acemq.Fatal, or the handler rejects it), the message is
// dead-lettered to N.p<k>.dlq with the contract's reason (exhausted N
// attempts: <err>, or the maximum age), and the partition goes on with the
// next. A body that does not decode is parked, as every consumer parks
// one. acemq.Requeue puts the message behind the others: its order is lost.
//
// opts are acemq.Consume's; Consume adds WithConcurrency(1),
// WithPolicy(o.Policy) and WithRetryInPlace() after them, which override
// any given. The retries, their waits (on the Conn's clock) and the dead
// letters are the consumer's own (acemq.WithRetryInPlace): an exhausted
// message is counted and observed as exhausted, as any consumer's. A wait
// that outlasts Close's drain timeout is cut short and the message handed
// back to the broker (a requeue): nothing is lost, and RabbitMQ 4.0 puts it
// back at the head of its partition, but 3.10 at the end, out of order.
func Consume[T any](ctx context.Context, c *acemq.Conn, s Set, h acemq.Handler[T], o Ordering, opts ...acemq.ConsumeOption) (*Consumers, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("partition: consume %s: the handler is nil", s.Name)
	}
	policy := o.Policy
	if policy.MaxAttempts() == 0 {
		policy = acemq.NoRetry()
	}
	if err := policy.Validate(); err != nil {
		return nil, fmt.Errorf("partition: consume %s: %w", s.Name, err)
	}
	ks := o.Partitions
	if ks == nil {
		for k := range s.count() {
			ks = append(ks, k)
		}
	}
	queues := make([]string, len(ks))
	for i, k := range ks {
		if k < 0 || k >= s.count() {
			return nil, fmt.Errorf("partition: consume %s: there is no partition %d of %d", s.Name, k, s.count())
		}
		if slices.Contains(ks[:i], k) {
			return nil, fmt.Errorf("partition: consume %s: partition %d is named twice", s.Name, k)
		}
		queues[i] = s.Queue(k)
	}
	opts = append(slices.Clip(opts), acemq.WithConcurrency(1), acemq.WithPolicy(policy), acemq.WithRetryInPlace())
	return start(ctx, queues, func(_ int, queue string) (*acemq.Consumer, error) {
		return acemq.Consume(ctx, c, queue, h, opts...)
	})
}
