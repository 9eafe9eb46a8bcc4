package idempotency

import (
	"context"
	"sync/atomic"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// usage records, for /acemq-info (package actuator), that the service runs
// an idempotent consumer, on the Conn whose consumer runs the handler (ctx
// is the handler's): Handler and Wrap are given no Conn. It records once
// per handler, not on every delivery (a lock on the Conn): a handler shared
// by consumers of two Conns is listed on the first's.
type usage struct{ recorded atomic.Bool }

func (u *usage) in(ctx context.Context) {
	if !u.recorded.Load() && acemq.AddHandlerCapabilities(ctx, contract.CapabilityIdempotentConsumer) {
		u.recorded.Store(true)
	}
}
