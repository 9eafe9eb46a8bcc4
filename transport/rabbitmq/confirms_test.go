package rabbitmq

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/transport"
)

// A confirm amqp091 dropped (its listener was slow for 5 s) fails the
// publishes before it as not confirmed; the confirm itself and the ones
// after it still match their publishes.
func TestADroppedConfirmIsNotConfirmed(t *testing.T) {
	p := &publisher{t: &Transport{log: slog.New(slog.DiscardHandler)}}
	confs := map[uint64]*transport.Confirmation{}
	for tag := uint64(1); tag <= 4; tag++ {
		c, resolve := transport.NewConfirmation()
		confs[tag] = c
		p.inflight = append(p.inflight, &pending{tag: tag, exchange: "x", key: "k", resolve: resolve})
	}
	p.confirmed(amqp.Confirmation{DeliveryTag: 3, Ack: true}) // 1 and 2 were dropped
	p.confirmed(amqp.Confirmation{DeliveryTag: 4, Ack: true})
	for tag, want := range map[uint64]error{1: ErrNotConfirmed, 2: ErrNotConfirmed, 3: nil, 4: nil} {
		// Err, not Wait: each is resolved by now, or the test fails.
		if err := confs[tag].Err(); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("publish %d: %v, want %v", tag, err, want)
		}
	}
	if len(p.inflight) != 0 {
		t.Errorf("%d publishes still in flight", len(p.inflight))
	}
}

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
