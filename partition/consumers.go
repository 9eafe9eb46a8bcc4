package partition

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/acemq-go/acemq"
)

// Consumers are the consumers Consume or ConsumeGroup started, one per
// queue taken (per partition) or per member.
type Consumers struct {
	queues    []string
	consumers []*acemq.Consumer
}

// Queues are the queues consumed, one per consumer, in order (a queue
// once per member of a group).
func (c *Consumers) Queues() []string { return c.queues }

// Stats adds up what every consumer did.
func (c *Consumers) Stats() acemq.Stats {
	var sum acemq.Stats
	for _, cons := range c.consumers {
		s := cons.Stats()
		sum.Accepted += s.Accepted
		sum.RetriedInConsumer += s.RetriedInConsumer
		sum.RetriedOnRung += s.RetriedOnRung
		sum.DeadLettered += s.DeadLettered
		sum.Parked += s.Parked
		sum.Requeued += s.Requeued
		sum.PutBack += s.PutBack
		sum.RungMissing += s.RungMissing
		sum.SetAsideFailed += s.SetAsideFailed
		sum.Waiting += s.Waiting
	}
	return sum
}

// Close closes every consumer (acemq.Consumer.Close, one after another,
// each within ctx) and adds up their reports.
func (c *Consumers) Close(ctx context.Context) (acemq.ShutdownReport, error) {
	var sum acemq.ShutdownReport
	var errs []error
	for _, cons := range c.consumers {
		r, err := cons.Close(ctx)
		sum.Requeued += r.Requeued
		sum.WaitsCutShort += r.WaitsCutShort
		sum.Abandoned += r.Abandoned
		sum.Settling += r.Settling
		errs = append(errs, err)
	}
	return sum, errors.Join(errs...)
}

// start starts one consumer per queue, all at once (each declares its
// queue's companions, a few round trips to the broker), closing those
// started when one fails; the first failure, in the queues' order, is the
// error.
func start(ctx context.Context, queues []string, begin func(i int, queue string) (*acemq.Consumer, error)) (*Consumers, error) {
	consumers := make([]*acemq.Consumer, len(queues))
	errs := make([]error, len(queues))
	var wg sync.WaitGroup
	for i, q := range queues {
		wg.Go(func() { consumers[i], errs[i] = begin(i, q) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			started := &Consumers{consumers: slices.DeleteFunc(consumers, func(c *acemq.Consumer) bool { return c == nil })}
			_, _ = started.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return &Consumers{queues: slices.Clone(queues), consumers: consumers}, nil
}
