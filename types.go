package acemq

import "github.com/acemq-go/acemq/transport"

// The wire types a service shares with the transports. They are aliases of
// package transport's, so that a value passes between the two unchanged; a
// service names them here and never imports the driver SPI for them.
type (
	// Table is a table of AMQP headers or arguments.
	Table = transport.Table
	// RawMessage is a message as it is on the wire: every AMQP property,
	// the headers and the undecoded body (Message[T] is a decoded one).
	RawMessage = transport.Message
	// RawDelivery is a RawMessage taken from a queue (Conn.Get, a Taker),
	// to be settled with Ack, Nack or Reject.
	RawDelivery = transport.Delivery
	// Taker goes through a queue one message at a time (Conn.Take).
	Taker = transport.Taker
	// Clock is a time source (WithClock): SystemClock in production, a
	// manual one in tests.
	Clock = transport.Clock
	// QueueState is a queue's depth and consumers (Conn.InspectQueue).
	QueueState = transport.QueueState
	// ConnState is what a Conn knows of its connection (Conn.State).
	ConnState = transport.State
	// Declaration is one exchange, queue or binding to declare, as a
	// Topology's Plan and a Ladder's Declarations list them.
	Declaration = transport.Declaration
	// ExchangeDeclaration, QueueDeclaration and BindingDeclaration are the
	// three kinds of Declaration, for reading a plan with a type switch.
	ExchangeDeclaration = transport.Exchange
	QueueDeclaration    = transport.Queue
	BindingDeclaration  = transport.Binding
	// ExchangeType is an exchange's type: "direct", "fanout", "topic" or
	// "headers".
	ExchangeType = transport.ExchangeType
	// QueueType is a queue's type: "classic", "quorum" or "stream".
	QueueType = transport.QueueType
)

// SystemClock is real time, the Conn's clock unless WithClock says otherwise.
var SystemClock Clock = transport.SystemClock
