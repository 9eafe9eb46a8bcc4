package partition

import (
	"context"
	"fmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// ConsumeGroup starts a consumer group on queue: members consumers, each
// acemq.Consume with opts and tagged acemq-<queue>-<n> (n from 0), as the
// Ruby and Python libraries tag theirs. Nothing is declared beyond what
// each consumer declares (its ladder), and the broker shares the
// deliveries out between them, so no order is kept.
func ConsumeGroup[T any](ctx context.Context, c *acemq.Conn, queue string, members int, h acemq.Handler[T], opts ...acemq.ConsumeOption) (*Consumers, error) {
	if members < 1 {
		return nil, fmt.Errorf("partition: the group on %s has %d members; want at least 1", queue, members)
	}
	queues := make([]string, members)
	for i := range queues {
		queues[i] = queue
	}
	return start(ctx, queues, func(n int, queue string) (*acemq.Consumer, error) {
		return acemq.Consume(ctx, c, queue, h, append(opts, acemq.WithConsumerTag(contract.GroupConsumerTag(queue, n)))...)
	})
}
