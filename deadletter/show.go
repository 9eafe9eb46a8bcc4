package deadletter

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport"
)

// Browse calls visit with the messages of queue in order, at most limit of
// them (0: every one it held at the start), and removes none: they go back
// to their places, which RabbitMQ then marks redelivered. An error from
// visit stops it and is returned.
func Browse(ctx context.Context, t transport.Transport, queue string, limit int, visit func(transport.Message) error) error {
	state, err := t.InspectQueue(ctx, queue)
	if err != nil {
		return fmt.Errorf("browse %s: %w", queue, err)
	}
	n := state.Messages
	if limit > 0 {
		n = min(n, limit)
	}
	taker, err := t.Take(ctx, queue)
	if err != nil {
		return fmt.Errorf("browse %s: %w", queue, err)
	}
	defer taker.Close()
	for range n {
		d, ok, err := taker.Next(ctx)
		if err != nil {
			return fmt.Errorf("browse %s: %w", queue, err)
		}
		if !ok {
			return nil
		}
		if err := visit(d.Message); err != nil {
			return err
		}
	}
	return nil
}

// ReasonCount is how many messages were set aside for one reason.
type ReasonCount struct {
	Reason string `json:"reason"` // x-acemq-error, "" when it has none
	Count  int    `json:"count"`
}

// Reasons counts the messages of queue by reason (x-acemq-error), the most
// frequent first, without removing any.
func Reasons(ctx context.Context, t transport.Transport, queue string) ([]ReasonCount, error) {
	counts := map[string]int{}
	err := Browse(ctx, t, queue, 0, func(m transport.Message) error {
		counts[acemq.ReadEnvelope(m).Error]++
		return nil
	})
	out := make([]ReasonCount, 0, len(counts))
	for r, n := range counts {
		out = append(out, ReasonCount{r, n})
	}
	slices.SortFunc(out, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return out, err
}

// QueueInfo describes a dead-letter or parked queue.
type QueueInfo struct {
	Name      string `json:"name"`
	Source    string `json:"source"`
	Messages  int    `json:"messages"` // ready
	Consumers int    `json:"consumers"`
	// Oldest is how long ago the message at the head of the queue, its
	// oldest, was first seen (x-acemq-first-seen); acemq.UnknownAge when
	// the queue is empty or the message does not say.
	Oldest time.Duration `json:"-"`
}

// Describe reports on a dead-letter or parked queue, looking at the message
// at its head (which goes back to its place, marked redelivered) for its age.
func Describe(ctx context.Context, t transport.Transport, queue string, now time.Time) (QueueInfo, error) {
	source, _ := Source(queue)
	info := QueueInfo{Name: queue, Source: source, Oldest: acemq.UnknownAge}
	state, err := t.InspectQueue(ctx, queue)
	if err != nil {
		return info, fmt.Errorf("describe %s: %w", queue, err)
	}
	info.Messages, info.Consumers = state.Messages, state.Consumers
	err = Browse(ctx, t, queue, 1, func(m transport.Message) error {
		info.Oldest = acemq.ReadEnvelope(m).Age(now)
		return nil
	})
	return info, err
}
