package memory

import (
	"errors"
	"fmt"

	"github.com/acemq-go/acemq/transport"
)

// The AMQP reply codes RabbitMQ answers with.
const (
	codeAccessRefused  = 403
	codeNotFound       = 404
	codeResourceLocked = 405
	codePrecondition   = 406
	codeCommandInvalid = 503
	codeNotImplemented = 540
	codeInternalError  = 541
)

// amqpError is a channel or connection exception as RabbitMQ raises it: the
// reply code and the reply text, word for word ("NOT_FOUND - no queue 'q' in
// vhost '/'"). Its Error is amqp091's, so that an error from memory:// reads
// like one from transport/rabbitmq.
type amqpError struct {
	code int
	text string
	// connection: a connection exception (503, 540, 541), which closes the whole
	// connection; the others close only the channel.
	connection bool
}

func (e *amqpError) Error() string { return fmt.Sprintf("Exception (%d) Reason: %q", e.code, e.text) }

// newError makes an exception; RabbitMQ cuts a reply text longer than an
// AMQP short string to 252 bytes and "...".
func newError(code int, connection bool, text string) *amqpError {
	if len(text) > 255 {
		text = text[:252] + "..."
	}
	return &amqpError{code: code, text: text, connection: connection}
}

func notFound(format string, args ...any) *amqpError {
	return newError(codeNotFound, false, "NOT_FOUND - "+fmt.Sprintf(format, args...))
}

func preconditionFailed(format string, args ...any) *amqpError {
	return newError(codePrecondition, false, "PRECONDITION_FAILED - "+fmt.Sprintf(format, args...))
}

func accessRefused(format string, args ...any) *amqpError {
	return newError(codeAccessRefused, false, "ACCESS_REFUSED - "+fmt.Sprintf(format, args...))
}

func commandInvalid(format string, args ...any) *amqpError {
	return newError(codeCommandInvalid, true, "COMMAND_INVALID - "+fmt.Sprintf(format, args...))
}

func notImplemented(format string, args ...any) *amqpError {
	return newError(codeNotImplemented, true, "NOT_IMPLEMENTED - "+fmt.Sprintf(format, args...))
}

func internalError() *amqpError {
	return newError(codeInternalError, true, "INTERNAL_ERROR")
}

func noQueue(name string) *amqpError    { return notFound("no queue '%s' in vhost '/'", name) }
func noExchange(name string) *amqpError { return notFound("no exchange '%s' in vhost '/'", name) }

func resourceLocked(queue string) *amqpError {
	return newError(codeResourceLocked, false, fmt.Sprintf("RESOURCE_LOCKED - cannot obtain exclusive access to locked queue '%s' in vhost '/'. "+
		"It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.", queue))
}

// getLocked is RabbitMQ's refusal of basic.get on a quorum queue with
// single active consumer; 4.3 prints the queue type as an Erlang binary.
func getLocked(queue string, em *emulation) *amqpError {
	typ := "quorum"
	if em.v43 {
		typ = `<<"quorum">>`
	}
	return newError(codeResourceLocked, false, fmt.Sprintf("RESOURCE_LOCKED - cannot obtain access to locked queue '%s' in vhost '/'. "+
		"basic.get operations are not supported by %s queues with single active consumer", queue, typ))
}

// mapErr makes err matchable with the transport's errors, exactly as
// transport/rabbitmq does: "memory: declare queue q (...): precondition
// failed: Exception (406) Reason: ...".
func mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("memory: %s: %w", what, classify(err))
}

func classify(err error) error {
	var ae *amqpError
	if errors.As(err, &ae) {
		switch ae.code {
		case codePrecondition:
			return fmt.Errorf("%w: %w", transport.ErrPreconditionFailed, err)
		case codeNotFound:
			return fmt.Errorf("%w: %w", transport.ErrNotFound, err)
		}
	}
	return err
}

// errAlreadySettled: a second settlement of one delivery. RabbitMQ would
// close the channel (406 unknown delivery tag); like transport/rabbitmq, the
// settler refuses it instead and nothing else is harmed.
var errAlreadySettled = errors.New("already settled")
