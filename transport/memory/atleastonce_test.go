package memory_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// atLeastOnce is the arguments of a quorum queue that dead-letters at least
// once into dlx under key, after ttl.
func atLeastOnce(ttl time.Duration, dlx, key string) transport.Table {
	return transport.Table{"x-message-ttl": ttl.Milliseconds(), "x-dead-letter-exchange": dlx, "x-dead-letter-routing-key": key,
		"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"}
}

// An at-least-once queue's dead-letter worker keeps what it could not route
// (the exchange routes it nowhere, or is missing) and tries again every 3
// minutes from the first it kept, as RabbitMQ's does with its default
// dead_letter_worker_publisher_confirm_timeout; the same in 3.10 and 4.0.
func TestAtLeastOnceRetriesEveryThreeMinutes(t *testing.T) {
	eachVersion(t, func(t *testing.T, _ bool, b *memory.Broker, clock *memory.ManualClock) {
		tr := connect(t, b)
		declareExchange(t, tr, "retry", transport.Direct)
		declareQueue(t, tr, transport.Queue{Name: "src"})
		declareQueue(t, tr, transport.Queue{Name: "rung", Type: transport.Quorum, Durable: true, Arguments: atLeastOnce(time.Second, "retry", "src")})
		sendBody(t, tr, "rung", "unbound")
		clock.Advance(time.Second)
		wantState(t, tr, "rung", 0, 0) // expired: with the worker, not ready
		clock.Advance(2 * time.Minute)
		bind(t, tr, "src", "retry", "src")
		clock.Advance(time.Minute - time.Millisecond)
		wantState(t, tr, "src", 0, 0)
		clock.Advance(time.Millisecond) // 3 minutes after the expiry
		mustGet(t, tr, "src", "unbound")

		// A missing exchange: kept at the first try, then routed at the
		// next once it exists.
		declareQueue(t, tr, transport.Queue{Name: "later-rung", Type: transport.Quorum, Durable: true, Arguments: atLeastOnce(time.Second, "later", "src")})
		sendBody(t, tr, "later-rung", "missing exchange")
		clock.Advance(time.Second + 3*time.Minute)
		wantState(t, tr, "src", 0, 0)
		declareExchange(t, tr, "later", transport.Direct)
		bind(t, tr, "src", "later", "src")
		clock.Advance(3*time.Minute - time.Millisecond)
		wantState(t, tr, "src", 0, 0)
		clock.Advance(time.Millisecond)
		d := mustGet(t, tr, "src", "missing exchange")
		if death := d.Headers["x-death"].([]any)[0].(transport.Table); death["queue"] != "later-rung" || death["reason"] != "expired" || death["count"] != int64(1) {
			t.Errorf("x-death %#v", death)
		}
		wantState(t, tr, "later-rung", 0, 0)
	})
}

// What the worker keeps counts towards x-max-length (a quorum queue takes
// the publish that goes over it, then refuses), and neither a purge nor a
// delete counts it: as RabbitMQ 3.10 and 4.0 answered.
func TestAtLeastOnceKeptCountTowardsTheLimit(t *testing.T) {
	eachVersion(t, func(t *testing.T, _ bool, b *memory.Broker, clock *memory.ManualClock) {
		tr := connect(t, b)
		declareExchange(t, tr, "retry", transport.Direct)
		args := atLeastOnce(100*time.Millisecond, "retry", "nowhere")
		args["x-max-length"] = int64(2)
		declareQueue(t, tr, transport.Queue{Name: "q", Type: transport.Quorum, Durable: true, Arguments: args})
		var taken []bool
		for i := range 5 {
			err := publish(t, tr, transport.Publishing{RoutingKey: "q", Message: transport.Message{Body: []byte(fmt.Sprint(i))}})
			if err != nil && !errors.Is(err, transport.ErrRefused) {
				t.Fatal(err)
			}
			taken = append(taken, err == nil)
			clock.Advance(400 * time.Millisecond)
			wantState(t, tr, "q", 0, 0)
		}
		if want := []bool{true, true, true, false, false}; !slices.Equal(taken, want) {
			t.Errorf("publishes taken %v, want %v", taken, want)
		}
		if n, err := tr.PurgeQueue(ctxOf(t), "q"); n != 0 || err != nil {
			t.Errorf("PurgeQueue = %d, %v; want 0", n, err)
		}
		if err := publish(t, tr, transport.Publishing{RoutingKey: "q"}); !errors.Is(err, transport.ErrRefused) {
			t.Errorf("publish after the purge: %v, want ErrRefused", err)
		}
		if n, err := tr.DeleteQueue(ctxOf(t), "q"); n != 0 || err != nil {
			t.Errorf("DeleteQueue = %d, %v; want 0", n, err)
		}
	})
}

// Without x-overflow reject-publish a quorum queue dead-letters at most
// once, whatever its x-dead-letter-strategy: a dead letter that routes
// nowhere is gone, and binding its target later brings nothing (RabbitMQ
// 3.10 and 4.0 had delivered nothing 4 minutes after the binding).
func TestAtLeastOnceNeedsRejectPublish(t *testing.T) {
	eachVersion(t, func(t *testing.T, _ bool, b *memory.Broker, clock *memory.ManualClock) {
		tr := connect(t, b)
		declareExchange(t, tr, "retry", transport.Direct)
		declareQueue(t, tr, transport.Queue{Name: "src"})
		args := atLeastOnce(time.Second, "retry", "src")
		delete(args, "x-overflow")
		declareQueue(t, tr, transport.Queue{Name: "rung", Type: transport.Quorum, Durable: true, Arguments: args})
		sendBody(t, tr, "rung", "dropped")
		clock.Advance(time.Second)
		bind(t, tr, "src", "retry", "src")
		clock.Advance(10 * time.Minute)
		wantState(t, tr, "src", 0, 0)
		wantState(t, tr, "rung", 0, 0)
	})
}
