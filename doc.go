// Package acemq is RabbitMQ messaging in which no message disappears
// quietly: typed publishing with confirms, consuming with retries whose long
// waits are the broker's (the retry ladder), and a queue a person can see for
// every message that cannot be handled. Names, arguments and headers follow
// the AceMQ wire contract shared with the Java, .NET, Python and Ruby
// libraries (package contract holds it as data), so services written with
// any of them share queues.
//
// # Connecting
//
// [Connect] dials RabbitMQ and recovers from a lost connection by itself:
//
//	conn, err := acemq.Connect(ctx, "amqp://guest:guest@localhost:5672/")
//	if err != nil {
//		return err
//	}
//	defer conn.Close()
//
// [New] takes any other transport instead, as the in-process broker of
// package transport/memory, which is as strict as RabbitMQ and needs nothing
// installed: acemq.New(memory.NewBroker().Connect()). A program that only
// uses RabbitMQ never links it.
//
// # Declaring what a service needs
//
// A [Topology] is exchanges and queues as values; a queue with DeadLetter
// gets Q.dlq and Q.parked, and one with a Retry policy its retry ladder:
//
//	policy := acemq.Exponential(6, 10*time.Second, 5*time.Minute)
//	topology := acemq.Topology{
//		Exchanges: []acemq.ExchangeSpec{{Name: "orders", Type: "topic"}},
//		Queues: []acemq.QueueSpec{{Name: "orders.new", DeadLetter: true, Retry: &policy,
//			Bindings: []acemq.BindingSpec{{Exchange: "orders", RoutingKey: "order.*"}}}},
//	}
//	err := topology.Apply(ctx, conn)
//
// [Topology.Plan] is the same declarations as a list, for review; the acemq
// command prints it and compares it with a live broker.
//
// # Publishing
//
// A [Publisher] of T encodes the body (JSON by default), adds the envelope
// (x-acemq-* headers) and returns once the broker has confirmed the message,
// or says why not ([ErrUnroutable], [ErrRefused], [ErrNotFound],
// [ErrTimeout], [ErrBlocked]):
//
//	orders, err := acemq.NewPublisher[Order](conn, "orders")
//	...
//	err = orders.Publish(ctx, "order.new", Order{ID: "o-1"})
//
// # Consuming, and what becomes of a message
//
// A [Handler] returns its [Decision]: [Accept], [Retry], [Reject] or [Park].
// A retry asks the [RetryPolicy] for a wait: a short one is held in the
// consumer, a long one on a rung of the ladder; a message that used its
// last attempt is dead-lettered to Q.dlq with its reason, one that cannot be
// decoded is parked in Q.parked. Every republish is confirmed before the
// delivery is acknowledged, so nothing is lost between the two:
//
//	consumer, err := acemq.Consume(ctx, conn, "orders.new",
//		func(ctx context.Context, m acemq.Message[Order]) acemq.Decision {
//			if err := ship(ctx, m.Body); err != nil {
//				return acemq.Retry(err)
//			}
//			return acemq.Accept()
//		}, acemq.WithPolicy(policy))
//	...
//	report, err := consumer.Close(ctx) // hands back what it holds
//
// Each delivery ends in one outcome of package contract (accepted,
// retried_in_consumer, retried_on_rung, dead_lettered, parked, requeued,
// put_back),
// with a reason class: the words [Stats], the [Observer], the logs and the
// acemq command all use. The metrics and spans of packages acemqprom and
// acemqotel say them in the AceMQ family's fewer words (acked, retried,
// rejected: the handler's rejection, dead_lettered, parked, in_progress:
// back on its queue; [contract.Outcome.Telemetry]), the reason class
// beside them.
//
// # The retry ladder, and queues
//
// RetryPolicy.Decide says what a consumer does with a failure, and
// RetryPolicy.Ladder which rung queues the policy gives a queue and what its
// consumers declare, without a broker: what the acemq ladder command prints.
// The Conn reads and tidies queues itself (InspectQueue, Get, Take,
// PurgeQueue, DeleteQueue: the Observer is told of a purge or a delete);
// the types they use (Table, RawMessage, RawDelivery, Clock, Declaration)
// are this package's. Package transport is the driver SPI, for writing a
// transport.
//
// # Interceptors
//
// An [Interceptor] sees each message in wire form before it is published
// ([WithPublishInterceptors]) or before it is decoded and handled
// ([WithConsumeInterceptors]), and may change it or refuse it: a refused
// publish is not sent, a refused delivery is a failure of its handler. The
// library's own republishes (retries, set-asides) go around them.
//
// # Options
//
// One [Option] type serves [Connect], [New], [NewPublisher] and [Consume].
// Each option says whom it configures and checks its value: a constructor
// given another's option, or a value out of range, fails with an error that
// names it ([ErrInvalidOption]).
//
// # Testing
//
// Package acemqtest gives each test its own in-process broker on a clock
// the test moves, so that a five-minute backoff takes no time.
package acemq
