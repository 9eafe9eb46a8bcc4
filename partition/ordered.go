package partition

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
)

// Handler handles one message of a partition: nil is done; an error is a
// failure, tried again in place under the Ordering's policy, or at once
// dead-lettered when marked acemq.Fatal.
type Handler[T any] func(ctx context.Context, m acemq.Message[T]) error

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
// messages are handled one at a time, in the order they were published. A
// failure is tried again at once in the same place, after the policy's
// wait (jittered as the contract jitters consumer waits), the attempt one
// higher on the Envelope the handler sees, while the rest of the
// partition waits behind it. When the policy gives up (or the error is
// acemq.Fatal), the message is dead-lettered to N.p<k>.dlq with the
// contract's reason (exhausted N attempts: <err>, or the maximum age), and
// the partition goes on with the next. A body that does not decode is
// parked, as every consumer parks one.
//
// opts are acemq.Consume's; Consume adds WithConcurrency(1) and
// WithPolicy(NoRetry()) after them, which override any given. A wait that
// outlasts Close's drain timeout is cut short and the message handed back
// to the broker (a requeue): nothing is lost, and RabbitMQ 4.0 puts it back
// at the head of its partition, but 3.10 at the end, out of order.
func Consume[T any](ctx context.Context, c *acemq.Conn, s Set, h Handler[T], o Ordering, opts ...acemq.Option) (*Consumers, error) {
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
	inPlace := retryInPlace(policy, h)
	opts = append(slices.Clip(opts), acemq.WithConcurrency(1), acemq.WithPolicy(acemq.NoRetry()))
	return start(ctx, queues, func(_ int, queue string) (*acemq.Consumer, error) {
		return acemq.Consume(ctx, c, queue, inPlace, opts...)
	})
}

// retryInPlace is h as a consumer's handler: each failure tried again
// after its wait, until the policy gives up.
func retryInPlace[T any](policy acemq.RetryPolicy, h Handler[T]) acemq.Handler[T] {
	schedule := policy.Schedule()
	return func(ctx context.Context, m acemq.Message[T]) acemq.Decision {
		first := max(m.Envelope.Attempt, 1)
		for tries := 1; ; tries++ {
			m.Envelope.Attempt = first + tries - 1
			err := h(ctx, m)
			switch {
			case err == nil:
				return acemq.Accept()
			case acemq.IsFatal(err):
				return acemq.Reject(err)
			case tries >= policy.MaxAttempts():
				return acemq.Reject(fmt.Errorf("%s: %w", contract.ExhaustedReason(policy.MaxAttempts()), err))
			}
			if limit := policy.MaxMessageAge(); limit > 0 {
				if age := m.Envelope.Age(time.Now()); age != acemq.UnknownAge && age >= limit {
					return acemq.Reject(fmt.Errorf("%s: %w", contract.TooOldReason(limit), err))
				}
			}
			wait := retry.Jittered(policy, schedule[min(tries-1, len(schedule)-1)], nil)
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return acemq.Requeue(fmt.Errorf("the consumer closed during a wait of %s: %w", wait, err))
			}
		}
	}
}
