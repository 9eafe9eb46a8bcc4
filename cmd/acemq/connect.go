package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport/memory"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// connect opens the broker at rawURL: memory://NAME is the in-process
// broker, which the command links and a service need not; anything else is
// RabbitMQ's, for acemq.Connect, named name in its management UI.
func connect(ctx context.Context, rawURL, name string, opts ...acemq.Option) (*acemq.Conn, error) {
	if u, err := url.Parse(rawURL); err == nil && u.Scheme != "memory" && u.Scheme != "amqp" && u.Scheme != "amqps" {
		return nil, fmt.Errorf("acemq: connect to %s: the scheme %q is not supported; use amqp://, amqps:// or memory://NAME", rabbitmq.RedactURL(rawURL), u.Scheme)
	}
	if strings.HasPrefix(rawURL, "memory://") {
		t, err := memory.Dial(ctx, rawURL)
		if err != nil {
			return nil, err
		}
		return acemq.New(t, opts...)
	}
	if name != "" {
		opts = append(opts, acemq.WithConnectionName(name))
	}
	return acemq.Connect(ctx, rawURL, opts...)
}
