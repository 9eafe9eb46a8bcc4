package acemq

import (
	"context"

	"github.com/acemq-go/acemq/transport"
)

// PublishMore is Publish of one message of a run the caller sends at once:
// more says that another publish of the run follows straight after, so the
// transport may hold this one back and write the run together
// (transport.Publishing.More), as PublishBatch does; the run's last says
// false. What is held goes out with the next write, when any Pending is
// waited on, or a millisecond later at the latest: package outbox's relay
// sends each batch so.
func (c *Conn) PublishMore(ctx context.Context, exchange, routingKey string, m RawMessage, more bool) (*Pending, error) {
	return c.publish(ctx, transport.Publishing{Exchange: exchange, RoutingKey: routingKey, Mandatory: true, Message: m, More: more}, "", true)
}
