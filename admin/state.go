// Package admin reads what a RabbitMQ broker holds, through its management
// HTTP API, and compares it with what a topology declares: the drift an
// operator must know about before applying a plan (a redeclaration that will
// fail with PRECONDITION_FAILED) or before trusting a running one (a rung
// whose messages never come home).
package admin

import (
	"context"
	"fmt"
	"net/http"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/acemq-go/acemq/internal/management"
	"github.com/acemq-go/acemq/transport"
)

// DefaultManagementPort is where RabbitMQ's management plugin listens.
const DefaultManagementPort = management.DefaultPort

// State is what one vhost of a broker holds.
type State struct {
	Exchanges []Exchange
	// Queues hold their arguments without x-queue-type, as transport.Queue
	// always does: the type is Type.
	Queues []transport.Queue
	// Bindings are those to queues; exchange-to-exchange bindings are left
	// out, since a topology never declares them.
	Bindings []transport.Binding
	// Stats are each queue's depth, consumers and rates, by name, as the
	// management API last sampled them.
	Stats map[string]QueueStats
	// RabbitMQVersion is the broker's version ("4.3.6"), which decides how
	// it compares some arguments (Diff).
	RabbitMQVersion string
}

// QueueStats are a queue's depth, consumers and message rates. The rates
// are per second over the management API's last sampling interval; they
// are 0 when it keeps no message statistics (rates_mode none).
type QueueStats struct {
	Messages    int // ready
	Unacked     int
	Consumers   int
	PublishRate float64 // messages published into the queue
	DeliverRate float64 // delivered to consumers or fetched
	AckRate     float64
}

// Exchange is an exchange as the broker holds it. Auto-delete and internal
// are here because RabbitMQ compares them on redeclaration, though AceMQ
// always declares both false.
type Exchange struct {
	Name       string
	Type       transport.ExchangeType
	Durable    bool
	AutoDelete bool
	Internal   bool
}

// Endpoint is a broker's management API and the vhost to read. Its String
// never shows the password.
type Endpoint struct {
	URL      string // scheme, host and port (and a path prefix, if any); no credentials
	Username string
	Password string
	Vhost    string
}

func (e Endpoint) String() string { return fmt.Sprintf("vhost %q at %s", e.Vhost, e.URL) }

// EndpointFor finds the management API of the broker at amqpURL: at
// managementURL when it is not "", else at amqpURL's host on port 15672
// over HTTP. The credentials are managementURL's when it has any, else
// amqpURL's; the vhost is always amqpURL's ("/" by default).
func EndpointFor(amqpURL, managementURL string) (Endpoint, error) {
	e, err := management.For(amqpURL, managementURL)
	return Endpoint(e), err
}

// Read lists the exchanges, queues and bindings of e's vhost.
func Read(ctx context.Context, e Endpoint) (State, error) {
	c, err := rabbithole.NewTLSClient(e.URL, e.Username, e.Password, contextTransport{ctx, http.DefaultTransport})
	if err != nil {
		return State{}, fmt.Errorf("management API at %s: %w", e.URL, err)
	}
	c.SetTimeout(30 * time.Second)

	exchanges, err := c.ListExchangesIn(e.Vhost)
	if err != nil {
		return State{}, readError(e, "exchanges", err)
	}
	queues, err := c.ListQueuesIn(e.Vhost)
	if err != nil {
		return State{}, readError(e, "queues", err)
	}
	bindings, err := c.ListBindingsIn(e.Vhost)
	if err != nil {
		return State{}, readError(e, "bindings", err)
	}
	overview, err := c.Overview()
	if err != nil {
		return State{}, readError(e, "the overview", err)
	}

	s := State{Stats: make(map[string]QueueStats, len(queues)), RabbitMQVersion: overview.RabbitMQVersion}
	for _, x := range exchanges {
		s.Exchanges = append(s.Exchanges, Exchange{Name: x.Name, Type: transport.ExchangeType(x.Type),
			Durable: x.Durable, AutoDelete: bool(x.AutoDelete), Internal: x.Internal})
	}
	for _, q := range queues {
		args := transport.Table{}
		for k, v := range q.Arguments {
			if k != transport.QueueTypeArgument {
				args[k] = v
			}
		}
		s.Queues = append(s.Queues, transport.Queue{Name: q.Name, Type: transport.QueueType(q.Type),
			Durable: q.Durable, Exclusive: q.Exclusive, AutoDelete: bool(q.AutoDelete), Arguments: args})
		st := QueueStats{Messages: q.MessagesReady, Unacked: q.MessagesUnacknowledged, Consumers: q.Consumers}
		if m := q.MessageStats; m != nil {
			st.PublishRate, st.DeliverRate, st.AckRate = float64(m.PublishDetails.Rate), float64(m.DeliverGetDetails.Rate), float64(m.AckDetails.Rate)
		}
		s.Stats[q.Name] = st
	}
	for _, b := range bindings {
		if b.DestinationType == "queue" {
			s.Bindings = append(s.Bindings, transport.Binding{Queue: b.Destination, Exchange: b.Source, RoutingKey: b.RoutingKey})
		}
	}
	return s, nil
}

// readError says what could not be listed where. Neither e.URL nor
// rabbit-hole's errors (which quote the request URL) hold the password.
func readError(e Endpoint, what string, err error) error {
	return fmt.Errorf("listing the %s of %s through the management API: %w", what, e, err)
}

// contextTransport ties every request to ctx: rabbit-hole takes no context.
type contextTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

func (t contextTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(r.WithContext(t.ctx))
}
