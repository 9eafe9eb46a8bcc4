package acemq_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/transport"
)

// blockedSentence is the family's detail for a blocked connection (section
// 21), written out as its alert rules match it.
const blockedSentence = "the broker has blocked this connection; publishing is paused"

// probe serves one request of h and decodes its JSON.
func probe(t *testing.T, h http.Handler) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("the probe's body %q: %v", rec.Body.String(), err)
	}
	return rec.Code, body
}

// blockConn raises a memory alarm on b and publishes on conn until the
// Conn knows it is blocked (RabbitMQ tells only a connection that
// publishes).
func blockConn(t *testing.T, b *acemqtest.Broker, conn *acemq.Conn) {
	t.Helper()
	if err := conn.Transport().DeclareQueue(t.Context(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	pub := acemqtest.NewPublisher[item](t, conn, "")
	b.SetAlarm("low on memory")
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := pub.Publish(short, "orders", item{N: 1}); !errors.Is(err, acemq.ErrBlocked) {
		t.Fatalf("a publish during the alarm: %v, want ErrBlocked", err)
	}
}

// A blocked connection is up and ready (section 21): restarting into a
// blocked broker, or taking every instance out of rotation for a
// broker-wide alarm, helps nobody. Readiness answers 200 with the family's
// sentence and the broker's reason.
func TestReadyWhileBlocked(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	blockConn(t, b, conn)
	h := conn.Health(t.Context())
	if !h.Ready() || !h.Blocked || h.Detail() != blockedSentence+": low on memory" {
		t.Errorf("Health during the alarm: ready %t, %+v, detail %q; want ready and blocked with the family's sentence", h.Ready(), h, h.Detail())
	}
	code, body := probe(t, conn.ReadinessHandler(time.Second))
	if code != http.StatusOK || body["status"] != "up" || body["ready"] != true || body["blocked"] != true ||
		body["blockedReason"] != "low on memory" || body["detail"] != blockedSentence+": low on memory" {
		t.Errorf("readiness during the alarm: %d %v; want 200, up, blocked, the family's sentence", code, body)
	}
	b.ClearAlarm()
}

// A Conn that is blocked (it published during the alarm) goes on consuming
// and acknowledging what was queued: on RabbitMQ its consumers are on a
// connection apart from the publishing one the broker blocks, and memory://
// is as strict.
func TestConsumersRunWhileBlocked(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	if err := conn.Transport().DeclareQueue(t.Context(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	pub := acemqtest.NewPublisher[item](t, conn, "")
	const queued = 20
	for n := range queued {
		if err := pub.Publish(t.Context(), "orders", item{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	blockConn(t, b, conn)
	defer b.ClearAlarm()
	c := consume(t, conn, "orders", func(context.Context, acemq.Message[item]) acemq.Decision { return acemq.Accept() },
		acemq.WithPrefetch(5))
	acemqtest.WaitFor(t, c, "the messages queued before the alarm, accepted during it", func(s acemq.Stats) bool { return s.Accepted == queued })
	if h := conn.Health(t.Context()); !h.Blocked {
		t.Errorf("Health after consuming: %+v, want still blocked", h)
	}
}

// stuck consumes "orders" on conn with a handler that holds its message
// until release is closed; it returns once the handler has begun.
func stuck(t *testing.T, b *acemqtest.Broker, conn *acemq.Conn, release <-chan struct{}) *acemq.Consumer {
	t.Helper()
	if err := conn.Transport().DeclareQueue(t.Context(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	c, err := acemq.Consume(t.Context(), conn, "orders", func(context.Context, acemq.Message[item]) acemq.Decision {
		close(started)
		<-release
		return acemq.Accept()
	}, acemq.WithDrainTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := acemqtest.NewPublisher[item](t, conn, "").Publish(t.Context(), "orders", item{N: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not begin within 10s")
	}
	return c
}

// A service draining (Shutdown called, its consumers finishing) is not
// ready: readiness answers 503 and says so, so that a load balancer sends
// it no more work. Shutdown returns once the handler has finished.
func TestNotReadyWhileDraining(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	release := make(chan struct{})
	stuck(t, b, conn, release)
	done := make(chan error, 1)
	go func() {
		_, err := conn.Shutdown(context.Background())
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !conn.Health(t.Context()).Draining {
		if time.Now().After(deadline) {
			t.Fatal("Health did not say draining within 10s of Shutdown")
		}
		time.Sleep(time.Millisecond)
	}
	h := conn.Health(t.Context())
	code, body := probe(t, conn.ReadinessHandler(time.Second))
	if h.Ready() || code != http.StatusServiceUnavailable || body["status"] != "down" || body["draining"] != true || body["ready"] != false {
		t.Errorf("readiness while draining: %d %v (Ready %t); want 503, down, draining", code, body, h.Ready())
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown once the handler finished: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return within 10s of the handler finishing")
	}
	if h := conn.Health(t.Context()); !h.Closed || h.Consumers != 0 {
		t.Errorf("Health after Shutdown: %+v, want closed with no consumer", h)
	}
}

// A drain that runs out of time, in Consumer.Close or in Conn.Shutdown, is
// an error matching ErrDrainTimeout, which a service maps to exit code 75.
func TestDrainTimeout(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for name, shut := range map[string]func(*acemq.Conn, *acemq.Consumer) (acemq.ShutdownReport, error){
		"Consumer.Close": func(_ *acemq.Conn, c *acemq.Consumer) (acemq.ShutdownReport, error) { return c.Close(ended) },
		"Conn.Shutdown":  func(conn *acemq.Conn, _ *acemq.Consumer) (acemq.ShutdownReport, error) { return conn.Shutdown(ended) },
	} {
		t.Run(name, func(t *testing.T) {
			b := acemqtest.NewBroker(t)
			conn := b.Connect(t)
			release := make(chan struct{})
			defer close(release)
			c := stuck(t, b, conn, release)
			report, err := shut(conn, c)
			if !errors.Is(err, acemq.ErrDrainTimeout) || report.Abandoned != 1 {
				t.Errorf("%s with its context ended and a handler running: %+v, %v; want one abandoned and ErrDrainTimeout", name, report, err)
			}
		})
	}
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	release := make(chan struct{})
	close(release)
	c := stuck(t, b, conn, release)
	if _, err := c.Close(t.Context()); err != nil {
		t.Errorf("Close once the handler finished: %v, want nil", err)
	}
}
