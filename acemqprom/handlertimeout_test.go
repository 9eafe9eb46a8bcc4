package acemqprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
)

// A handler that hangs past its timeout: counted as a timeout, overrunning
// until it returns; its retry waits in the consumer (counted as a retry
// waiting, of class timeout) and is counted so when it is republished.
func TestHandlerTimeoutOnMemory(t *testing.T) {
	reg, b, conn := ordersOnMemory(t)
	started, release := make(chan struct{}, 2), make(chan struct{})
	c, err := acemq.Consume(context.Background(), conn, "orders", func(context.Context, acemq.Message[item]) acemq.Decision {
		started <- struct{}{}
		<-release // ignores its context
		return acemq.Accept()
	}, acemq.WithPolicy(acemq.Fixed(2, 10*time.Second)), acemq.WithHandlerTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	if err := acemqtest.NewPublisher[item](t, conn, "").Publish(context.Background(), "orders", item{Do: "hang"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not start within 10s")
	}

	b.Advance(5 * time.Second)
	timeouts, overrunning := series("handler_timeouts_total", "queue", "orders"), series("handler_overrunning", "queue", "orders")
	waiting := series("retry_waiting", "queue", "orders", "where", "consumer")
	eventually(t, reg, "the timeout", including(map[string]float64{timeouts: 1, overrunning: 1, waiting: 1}))
	close(release)
	released = true
	eventually(t, reg, "the handler back", including(map[string]float64{timeouts: 1, overrunning: 0, waiting: 1}))

	b.Advance(10 * time.Second)
	eventually(t, reg, "the retry and the second attempt", including(map[string]float64{
		series("consume_total", "queue", "orders", "message_type", "orders", "outcome", "retried", "reason_class", "timeout"): 1,
		series("consume_total", "queue", "orders", "message_type", "orders", "outcome", "acked", "reason_class", "none"):      1,
		series("messages_retried_total", "queue", "orders", "rung", "consumer"):                                               1,
		waiting: 0, timeouts: 1, overrunning: 0,
	}))
	checkLabels(t, reg)
}
