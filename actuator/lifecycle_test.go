package actuator_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// blockedSentence is the family's detail for a blocked connection (section
// 21), written out as its alert rules match it.
const blockedSentence = "the broker has blocked this connection; publishing is paused"

// familyHealth is /acemq-health's JSON with the family's parts.blocked and
// parts.blockedReason beside the parts.
type familyHealth struct {
	Status string                     `json:"status"`
	Detail string                     `json:"detail"`
	Parts  map[string]json.RawMessage `json:"parts"`
}

func (h familyHealth) part(t *testing.T, name string) map[string]string {
	t.Helper()
	var p map[string]string
	if err := json.Unmarshal(h.Parts[name], &p); err != nil {
		t.Fatalf("parts.%s %s: %v", name, h.Parts[name], err)
	}
	return p
}

// While the broker blocks the connection (a memory alarm), /acemq-health
// and /readyz answer 200 and up, with the family's sentence and the
// broker's reason: publishes wait for the alarm to clear by themselves.
func TestHealthUpWhileBlocked(t *testing.T) {
	b := acemqtest.NewBroker(t)
	conn := b.Connect(t)
	if err := conn.Transport().DeclareQueue(t.Context(), transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	pub := acemqtest.NewPublisher[string](t, conn, "")
	base := serve(t, conn, nil)
	b.SetAlarm("low on memory")
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	err := pub.Publish(short, "orders", "hello") // RabbitMQ tells a connection it is blocked once it publishes
	cancel()
	if !errors.Is(err, acemq.ErrBlocked) {
		t.Fatalf("a publish during the alarm: %v, want ErrBlocked", err)
	}
	wantBlocked(t, base, blockedSentence+": low on memory", "low on memory")
	b.ClearAlarm()
	if err := pub.Publish(t.Context(), "orders", "again"); err != nil {
		t.Fatal(err)
	}
	r := do(t, http.MethodGet, base+"/acemq-health")
	if h := decode[familyHealth](t, r); r.code != http.StatusOK || h.Status != "up" || string(h.Parts["blocked"]) != "false" {
		t.Errorf("GET /acemq-health after the alarm: %d %s, want up and not blocked", r.code, r.body)
	}
}

// wantBlocked checks /acemq-health and /readyz under base during an alarm.
func wantBlocked(t *testing.T, base, detail, reason string) {
	t.Helper()
	r := do(t, http.MethodGet, base+"/acemq-health")
	t.Logf("/acemq-health %d %s", r.code, r.body)
	h := decode[familyHealth](t, r)
	if r.code != http.StatusOK || h.Status != "up" || h.Detail != detail || string(h.Parts["blocked"]) != "true" ||
		string(h.Parts["blockedReason"]) != `"`+reason+`"` || h.part(t, "connection")["status"] != "up" || h.part(t, "connection")["detail"] != detail {
		t.Errorf("GET /acemq-health during the alarm: %d %s, want 200, up, %q, parts.blocked and parts.blockedReason", r.code, r.body, detail)
	}
	r = do(t, http.MethodGet, base+"/readyz")
	t.Logf("/readyz %d %s", r.code, r.body)
	ready := decode[map[string]any](t, r)
	if r.code != http.StatusOK || ready["status"] != "up" || ready["detail"] != detail || ready["blocked"] != true || ready["blockedReason"] != reason {
		t.Errorf("GET /readyz during the alarm: %d %s, want 200, up, %q", r.code, r.body, detail)
	}
}

// While the service drains (Conn.Shutdown, a handler still finishing),
// /acemq-health and /readyz answer 503: the actuator and Health agree that
// it is not ready, so that a load balancer sends it no more work.
// It holds on memory:// and on RabbitMQ.
func TestNotReadyWhileDraining(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		notReadyWhileDraining(t, acemqtest.NewBroker(t).Connect(t), "orders")
	})
	t.Run("rabbitmq", func(t *testing.T) {
		conn, err := acemq.Connect(t.Context(), brokertest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		notReadyWhileDraining(t, conn, brokertest.UniqueName(t, "draining"))
	})
}

func notReadyWhileDraining(t *testing.T, conn *acemq.Conn, queue string) {
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue}}}).Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	if _, err := acemq.Consume(t.Context(), conn, queue, func(context.Context, acemq.Message[string]) acemq.Decision {
		close(started)
		<-release
		return acemq.Accept()
	}); err != nil {
		t.Fatal(err)
	}
	if err := acemqtest.NewPublisher[string](t, conn, "").Publish(t.Context(), queue, "hello"); err != nil {
		t.Fatal(err)
	}
	base := serve(t, conn, nil)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not begin within 10s")
	}
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
	r := do(t, http.MethodGet, base+"/acemq-health")
	h := decode[health](t, r)
	if r.code != http.StatusServiceUnavailable || h.Status != "down" || h.Parts["consumers"]["status"] != "down" ||
		h.Detail != "draining: the service is shutting down, 1 consumer finishing" {
		t.Errorf("GET /acemq-health while draining: %d %s, want 503, down, draining", r.code, r.body)
	}
	r = do(t, http.MethodGet, base+"/readyz")
	if ready := decode[map[string]any](t, r); r.code != http.StatusServiceUnavailable || ready["status"] != "down" || ready["draining"] != true {
		t.Errorf("GET /readyz while draining: %d %s, want 503, down, draining", r.code, r.body)
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return within 10s of the handler finishing")
	}
}
