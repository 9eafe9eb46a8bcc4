// Package request is request-reply over AceMQ (CONTRACT.md section 11): a
// Client sends a request and waits for its reply, and Serve answers the
// requests of a queue with a handler.
//
// A request names its reply address twice, in the AMQP reply-to property
// and the acemq-reply-to header, and carries a new UUID as its message id,
// its AMQP correlation-id and its x-acemq-correlation, so that a responder
// of any AceMQ library answers it: those that copy the correlation id
// (Java, Go, Ruby, Python) and .NET, which answers with the request's
// message id. Each Client has one reply queue, acemq-reply-<uuid>
// (exclusive, auto-delete, classic), declared again after a lost
// connection. Requests and replies are published with acemq.Conn.Publish:
// the Conn's Observer counts and traces them, and a reply goes on in its
// request's trace. An Observer that is an acemq.RequestObserver is told
// each Do as a whole too (acemq.Conn.ObserveRequest): answered, timed_out
// or failed.
//
// A reply that comes too late is no proof that the request was not
// handled: a timeout (acemq.ErrTimeout, matching context.DeadlineExceeded too)
// says so, and a request is safe to send again only to an idempotent
// responder.
package request
