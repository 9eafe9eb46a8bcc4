package idempotency

import (
	"context"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// useIn records, for /acemq-info (package actuator), that the service runs
// an idempotent consumer, on the Conn whose consumer runs the handler (ctx
// is the handler's): Handler and Wrap are given no Conn.
func useIn(ctx context.Context) {
	acemq.AddHandlerCapabilities(ctx, contract.CapabilityIdempotentConsumer)
}
