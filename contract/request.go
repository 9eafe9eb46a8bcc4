package contract

import "time"

// Request-reply (section 11).
const (
	// HeaderReplyTo names a request's reply address beside the AMQP
	// reply-to property, with the same value; a responder reads it first.
	HeaderReplyTo = "acemq-reply-to"
	// HeaderReplyError is on a reply whose responder failed: the failure's
	// text, with an empty body.
	HeaderReplyError = "acemq-error"
	// ReplyQueuePrefix starts a requester's reply queue, followed by a new
	// UUID: exclusive, auto-delete and classic, as the other Go library has
	// it.
	ReplyQueuePrefix = "acemq-reply-"
	// ReplyType is a reply's message type when the responder names none.
	ReplyType = "Reply"
	// DefaultRequestTimeout bounds a request whose context has no deadline.
	DefaultRequestTimeout = 30 * time.Second
	// RequestMayStillBeHandled is what a request's timeout says: no reply is
	// not no handling.
	RequestMayStillBeHandled = "the request may still be handled: resend it only if the responder is idempotent"
)
