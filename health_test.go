package acemq_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

func TestHealth(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	h := conn.Health(t.Context())
	if !h.Connected || h.Closed || h.Blocked || h.Consumers != 0 || h.Recoveries != 0 || h.LastError != nil || h.Broker != b.URL {
		t.Errorf("a new Conn's Health: %+v", h)
	}
	if err := conn.Transport().DeclareQueue(context.Background(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c, err := acemq.Consume(context.Background(), conn, "orders", func(context.Context, acemq.Message[item]) acemq.Decision { return acemq.Accept() })
	if err != nil {
		t.Fatal(err)
	}
	if n := conn.Health(t.Context()).Consumers; n != 1 {
		t.Errorf("Consumers = %d with one running, want 1", n)
	}
	if _, err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Close(context.Background()) // a second Close must not count twice
	if n := conn.Health(t.Context()).Consumers; n != 0 {
		t.Errorf("Consumers = %d after Close, want 0", n)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if h := conn.Health(t.Context()); h.Connected || !h.Closed {
		t.Errorf("Health after Close: %+v, want closed and not connected", h)
	}
}

// A memory alarm: Health says blocked once the Conn publishes, a publish with
// a deadline fails saying so, nothing is lost, and publishing resumes after.
func TestHealthBlocked(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	ctx := context.Background()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	pub := acemqtest.NewPublisher[item](t, conn, "")
	b.SetAlarm("low on memory")
	if conn.Health(t.Context()).Blocked {
		t.Error("Health says blocked before the Conn published: RabbitMQ tells only a connection that publishes")
	}

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	err := pub.Publish(short, "orders", item{N: 1})
	cancel()
	if !errors.Is(err, acemq.ErrBlocked) || !strings.Contains(err.Error(), "blocked by the broker: low on memory") {
		t.Errorf("Publish during the alarm: %v, want ErrBlocked with the reason", err)
	}
	if h := conn.Health(t.Context()); !h.Blocked || h.BlockedReason != "low on memory" || !h.Connected {
		t.Errorf("Health during the alarm: %+v, want connected and blocked, with the reason", h)
	}

	later := make(chan error, 1)
	go func() { later <- pub.Publish(ctx, "orders", item{N: 2}) }()
	b.ClearAlarm()
	if err := <-later; err != nil {
		t.Errorf("a publish as the alarm clears: %v, want confirmed", err)
	}
	if conn.Health(t.Context()).Blocked {
		t.Error("Health still says blocked after the alarm cleared")
	}
	msgs := b.Messages(t, "orders")
	if len(msgs) != 1 || string(msgs[0].Body) != `{"n":2}` {
		t.Errorf("orders holds %+v, want only message 2 (1 was never published)", msgs)
	}
}

// The probes a service mounts: liveness while the Conn is open, readiness
// while the broker answers; both 503 once the Conn is closed.
func TestHealthHandlers(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	probe := func(h http.Handler) (int, map[string]any) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("the probe's body %q: %v", rec.Body.String(), err)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		return rec.Code, body
	}
	// Liveness asks the broker nothing, so it says nothing of readiness:
	// not "ready": false on a healthy connection.
	unasked := func(name string, body map[string]any) {
		t.Helper()
		for _, k := range []string{"ready", "answered", "roundTripSeconds"} {
			if v, ok := body[k]; ok {
				t.Errorf("%s says %s: %v, which it did not check", name, k, v)
			}
		}
	}
	live, ready := conn.LivenessHandler(), conn.ReadinessHandler(time.Second)
	code, body := probe(live)
	if code != http.StatusOK || body["live"] != true || body["broker"] != b.URL || body["connected"] != true || body["closed"] != false {
		t.Errorf("liveness: %d %v", code, body)
	}
	unasked("liveness", body)
	if code, body := probe(ready); code != http.StatusOK || body["ready"] != true || body["answered"] != true || body["connected"] != true || body["live"] != true {
		t.Errorf("readiness: %d %v", code, body)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	code, body = probe(live)
	if code != http.StatusServiceUnavailable || body["closed"] != true || body["live"] != false {
		t.Errorf("liveness after Close: %d %v, want 503, closed and not live", code, body)
	}
	unasked("liveness after Close", body)
	if code, body := probe(ready); code != http.StatusServiceUnavailable || body["closed"] != true || body["ready"] != false || body["answered"] != false {
		t.Errorf("readiness after Close: %d %v, want 503, closed and not ready", code, body)
	}
}

func TestHealthOnBroker(t *testing.T) {
	conn, err := acemq.Connect(t.Context(), brokertest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := conn.Health(t.Context())
	if !h.Ready() || !h.Answered || h.RoundTrip <= 0 || !h.Live() {
		t.Errorf("Health of a new connection to RabbitMQ: %+v, want ready, answered, with a round trip", h)
	}
	// With its context ended, Health asks the broker nothing.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if h := conn.Health(ctx); h.Answered || h.Ready() || !h.Connected {
		t.Errorf("Health with an ended context: %+v, want connected but not answered", h)
	}
}
