package request_test

import (
	"maps"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/request"
)

// Do adds the reply address to the request's headers without writing
// into a map an option handed it: one map given to requests of several
// goroutines would be written by all of them at once.
func TestDoLeavesTheCallersHeadersAlone(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		serve(t, b, price)
		c := client(t, b)
		shared := acemq.Table{"tenant": "acme"}
		before := maps.Clone(shared)
		headers := func(e *acemq.Envelope) { e.Headers = shared }
		if _, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "sku-1", Qty: 1}, headers); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(shared, before) {
			t.Errorf("the caller's headers became %v, want them left %v (%s added to the request only)", shared, before, contract.HeaderReplyTo)
		}
	})
}
