package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/acemq-go/acemq/transport"
)

// ReadQueue reads one queue of e's vhost: its declaration (with its type,
// which AMQP does not tell) and its depth. A missing queue is an error
// matching transport.ErrNotFound.
func ReadQueue(ctx context.Context, e Endpoint, name string) (transport.Queue, QueueStats, error) {
	c, err := rabbithole.NewTLSClient(e.URL, e.Username, e.Password, contextTransport{ctx, http.DefaultTransport})
	if err != nil {
		return transport.Queue{}, QueueStats{}, fmt.Errorf("management API at %s: %w", e.URL, err)
	}
	c.SetTimeout(30 * time.Second)
	q, err := c.GetQueue(e.Vhost, name)
	var missing rabbithole.ErrorResponse
	if errors.As(err, &missing) && missing.StatusCode == http.StatusNotFound {
		return transport.Queue{}, QueueStats{}, fmt.Errorf("queue %s in %s: %w", name, e, transport.ErrNotFound)
	}
	if err != nil {
		return transport.Queue{}, QueueStats{}, fmt.Errorf("reading the queue %s of %s through the management API: %w", name, e, err)
	}
	args := transport.Table{}
	for k, v := range q.Arguments {
		if k != transport.QueueTypeArgument {
			args[k] = v
		}
	}
	return transport.Queue{Name: q.Name, Type: transport.QueueType(q.Type), Durable: q.Durable, Exclusive: q.Exclusive,
			AutoDelete: bool(q.AutoDelete), Arguments: args},
		QueueStats{Messages: q.MessagesReady, Unacked: q.MessagesUnacknowledged, Consumers: q.Consumers}, nil
}
