package rabbitmq

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A publish whose write failed on the socket may have gone out: it is not
// confirmed (ErrNotConfirmed), not another failure; a refusal is neither.
func TestLostSocket(t *testing.T) {
	reset := &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}
	for err, want := range map[error]bool{
		reset: true, fmt.Errorf("flush: %w", reset): true, io.EOF: true, syscall.EPIPE: true,
		amqp.ErrClosed: false, &amqp.Error{Code: amqp.AccessRefused, Reason: "ACCESS_REFUSED"}: false, errors.New("other"): false,
	} {
		if got := lostSocket(err); got != want {
			t.Errorf("lostSocket(%v) = %v, want %v", err, got, want)
		}
	}
}
