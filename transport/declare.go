// Package transport is the vocabulary the acemq package speaks to a broker
// with: the declarations it makes and the messages it moves. Every broker
// behind acemq (RabbitMQ, the in-process memory:// broker, a recorder that
// only writes a plan down) takes these same values, so a plan, an apply and a
// diff all start from one description.
package transport

import (
	"context"
	"fmt"

	"github.com/acemq-go/acemq/contract"
)

// Table is an AMQP field table: queue and binding arguments, message headers.
// Values are what AMQP 0-9-1 can carry (string, int64 and the other integer
// widths, bool, float64, []byte, time.Time, nested Table, []any).
type Table map[string]any

// ExchangeType is the routing algorithm of an exchange.
type ExchangeType string

// The exchange types RabbitMQ ships with.
const (
	Direct  ExchangeType = "direct"
	Fanout  ExchangeType = "fanout"
	Topic   ExchangeType = "topic"
	Headers ExchangeType = "headers"
)

// QueueType is the kind of a queue. Classic is declared with no x-queue-type
// argument at all; the others send their name in x-queue-type.
type QueueType string

// The queue types RabbitMQ offers.
const (
	Classic QueueType = contract.QueueTypeClassic
	Quorum  QueueType = contract.QueueTypeQuorum
	Stream  QueueType = contract.QueueTypeStream
)

// QueueTypeArgument is the queue argument that carries a non-classic type.
const QueueTypeArgument = contract.ArgQueueType

// Declarer is anything that can declare exchanges and queues and bind them:
// a broker connection, or a Recorder that writes the declarations down.
type Declarer interface {
	DeclareExchange(ctx context.Context, e Exchange) error
	DeclareQueue(ctx context.Context, q Queue) error
	Bind(ctx context.Context, b Binding) error
}

// A Declaration is one step of a plan: an Exchange, a Queue or a Binding.
type Declaration interface {
	// Kind is "exchange", "queue" or "binding".
	Kind() string
	// DeclareOn sends this declaration to d.
	DeclareOn(ctx context.Context, d Declarer) error
	fmt.Stringer
}

// Exchange declares an exchange.
type Exchange struct {
	Name    string
	Type    ExchangeType
	Durable bool
}

// Queue declares a queue. Arguments never hold x-queue-type: the type is
// Type, and WireArguments adds it where RabbitMQ expects it.
type Queue struct {
	Name       string
	Type       QueueType
	Durable    bool
	Exclusive  bool
	AutoDelete bool
	Arguments  Table
}

// Binding binds a queue to an exchange under a routing key.
type Binding struct {
	Queue      string
	Exchange   string
	RoutingKey string
}

func (Exchange) Kind() string { return "exchange" }
func (Queue) Kind() string    { return "queue" }
func (Binding) Kind() string  { return "binding" }

func (e Exchange) DeclareOn(ctx context.Context, d Declarer) error { return d.DeclareExchange(ctx, e) }
func (q Queue) DeclareOn(ctx context.Context, d Declarer) error    { return d.DeclareQueue(ctx, q) }
func (b Binding) DeclareOn(ctx context.Context, d Declarer) error  { return d.Bind(ctx, b) }

// WireArguments is the argument table sent to the broker: Arguments plus
// x-queue-type for every type but classic.
func (q Queue) WireArguments() Table {
	args := make(Table, len(q.Arguments)+1)
	for k, v := range q.Arguments {
		args[k] = v
	}
	if q.Type != "" && q.Type != Classic {
		args[QueueTypeArgument] = string(q.Type)
	}
	return args
}

func (e Exchange) String() string {
	return fmt.Sprintf("exchange %s (%s%s)", e.Name, e.Type, durability(e.Durable))
}

func (q Queue) String() string {
	s := fmt.Sprintf("queue %s (%s%s", q.Name, q.Type, durability(q.Durable))
	if q.Exclusive {
		s += ", exclusive"
	}
	if q.AutoDelete {
		s += ", auto-delete"
	}
	s += ")"
	if len(q.Arguments) > 0 {
		s += " " + FormatTable(q.Arguments)
	}
	return s
}

func (b Binding) String() string {
	return fmt.Sprintf("binding %s -> %s under %q", b.Exchange, b.Queue, b.RoutingKey)
}

func durability(durable bool) string {
	if durable {
		return ", durable"
	}
	return ", transient"
}

// Recorder is a Declarer that only writes the declarations down, in order.
// Declaring against a Recorder is how a plan is made without a broker.
type Recorder struct {
	Declarations []Declaration
}

func (r *Recorder) DeclareExchange(_ context.Context, e Exchange) error {
	r.Declarations = append(r.Declarations, e)
	return nil
}

func (r *Recorder) DeclareQueue(_ context.Context, q Queue) error {
	r.Declarations = append(r.Declarations, q)
	return nil
}

func (r *Recorder) Bind(_ context.Context, b Binding) error {
	r.Declarations = append(r.Declarations, b)
	return nil
}

// DeclareAll sends each declaration to d in order, stopping at the first
// that fails and naming it.
func DeclareAll(ctx context.Context, d Declarer, ds []Declaration) error {
	for _, decl := range ds {
		if err := decl.DeclareOn(ctx, d); err != nil {
			return fmt.Errorf("declaring %s: %w", decl, err)
		}
	}
	return nil
}
