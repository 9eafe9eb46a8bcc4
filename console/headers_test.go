package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

// x-death is shown once, on its own, one death a line; the other headers
// without it.
func TestQueuePageShowsXDeathOnce(t *testing.T) {
	f := newFixture(t, 0, nil)
	deaths := []any{
		transport.Table{"queue": "orders.new", "reason": "rejected", "count": int64(3), "exchange": ""},
		transport.Table{"queue": "orders.new.retry.5s", "reason": "expired", "count": int64(1), "exchange": ""},
	}
	c, err := f.conn.Transport().Publish(t.Context(), transport.Publishing{RoutingKey: f.dlq, Mandatory: true, Message: transport.Message{
		Headers: transport.Table{contract.HeaderID: "id-death", contract.HeaderDeath: deaths, "tenant": "acme"}, Body: []byte("{}")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := get(t, f, "/queue?name="+f.dlq)
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d:\n%s", r.status, r.body)
	}
	if n := strings.Count(r.body, "orders.new.retry.5s"); n != 1 {
		t.Errorf("x-death's second death is shown %d times, want once:\n%s", n, r.body)
	}
	if !strings.Contains(r.body, "x-death (newest first):\n{count: 3, exchange: &#34;&#34;, queue: &#34;orders.new&#34;, reason: &#34;rejected&#34;}\n{count: 1,") {
		t.Errorf("x-death not one death a line:\n%s", r.body)
	}
	if !strings.Contains(r.body, "tenant: &#34;acme&#34;") {
		t.Errorf("the other headers are missing:\n%s", r.body)
	}
}
