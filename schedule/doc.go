// Package schedule is delayed send on the AceMQ family's scheduler topology
// (CONTRACT.md section 12): publish a message now to be delivered in ten
// minutes, or at a given time, with nothing but RabbitMQ (no plugin) and
// nothing held in a process's memory while it waits.
//
//	sched, err := schedule.New(ctx, conn) // declares acemq.schedule and its queues
//	...
//	err = sched.PublishIn(ctx, 10*time.Minute, "orders", "order.remind", Reminder{ID: "o-1"})
//	...
//	fwd, err := sched.Forward(ctx) // in one process or more: moves and delivers
//	...
//	report, err := fwd.Close(ctx)
//
// A message waits on rungs, classic queues whose time-to-live is the wait
// (acemq.schedule.1h, .10m, .1m, .10s and .1s), each dead-lettering into
// acemq.schedule.due. The forwarder consumes that queue and sends each
// message on to the longest rung not longer than what remains of its wait
// (90s is a minute, then three times ten seconds), or, with under a second
// left, delivers it to its target exchange and routing key in a new
// envelope of type ScheduledMessage, with the body's own content type.
// Precision is about the shortest rung: a message may be delivered up to
// a second early (it came back with under a second left), and late by what
// the broker and the forwarder add (and up to half a second more: a rung is
// taken when what remains falls short of it by no more than that, as each
// hop takes milliseconds). A rung is never a per-message
// expiration, so a long wait never holds back a short one.
//
// Every hop and the delivery are mandatory, confirmed publishes through
// acemq.Conn.Forward (the Conn's interceptors see them; its Observer counts
// and traces them as the library's own republishes, kinds schedule_hop and
// schedule_delivery, not as the application's) made before the message is
// acked, without the broker's dead-lettering history (x-death and the
// x-first-death-* and x-last-death-* headers) that waiting on a rung adds, so a crash or a
// lost connection between the two sends the message again rather than
// losing it: a message may be delivered twice, never not at all, as far as
// the forwarder goes. RabbitMQ dead-letters from a classic rung at most
// once; see docs/scheduling.md for what a broker restart does.
//
// The forwarder is an acemq consumer like any other: a retry policy
// (DefaultPolicy) for a publish that fails, a prefetch, graceful Close,
// Stats, and the due queue's .dlq and .parked. A message in the due queue
// that the scheduler did not send is parked with ErrForeign.
package schedule
