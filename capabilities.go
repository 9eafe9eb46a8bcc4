package acemq

import (
	"context"
	"slices"
	"sync"

	"github.com/acemq-go/acemq/contract"
)

// everyService is what every service offers, whatever it uses: confirmed
// publishes, the retry ladder of the contract's rungs and of at-least-once
// rungs, Q.dlq and Q.parked.
var everyService = []contract.Capability{
	contract.CapabilityPublisherConfirms, contract.CapabilityRetryLadder,
	contract.CapabilityAtLeastOnceRungs, contract.CapabilityDeadLetterQueues,
}

// capabilities is what a Conn's service has used through it, on top of
// everyService. It only grows: a capability used once is the service's.
type capabilities struct {
	mu   sync.Mutex
	used []contract.Capability
}

// Capabilities is what the service offers through c, sorted, as the info
// endpoint lists them (package actuator): every service's, and those of the
// patterns it has started on c (request-reply, scheduler), of the codecs
// given to its publishers and consumers (claim-check, encryption) and of
// the handler wrappers its consumers have run (idempotent-consumer). So a
// capability is listed once the service uses it, not because the program
// links a package.
func (c *Conn) Capabilities() []contract.Capability {
	c.capabilities.mu.Lock()
	defer c.capabilities.mu.Unlock()
	return slices.Sorted(slices.Values(slices.Concat(everyService, c.capabilities.used)))
}

// AddCapabilities records that the service uses caps through c; a pattern
// package calls it when it starts on c (request.NewClient, schedule.New).
// Adding one twice lists it once.
func (c *Conn) AddCapabilities(caps ...contract.Capability) {
	c.capabilities.mu.Lock()
	defer c.capabilities.mu.Unlock()
	for _, cp := range caps {
		if !slices.Contains(everyService, cp) && !slices.Contains(c.capabilities.used, cp) {
			c.capabilities.used = append(c.capabilities.used, cp)
		}
	}
}

// CapabilityCodec is a codec that brings capabilities of its own (the
// claim-check and encryption codecs): a Conn lists them once a publisher or
// consumer of it is given the codec.
type CapabilityCodec interface {
	Codec
	Capabilities() []contract.Capability
}

// CodecCapabilities is what codec brings: its Capabilities when it is a
// CapabilityCodec, else none. A pattern that encodes with a codec itself
// (request, schedule) adds them to its Conn.
func CodecCapabilities(codec Codec) []contract.Capability {
	if c, ok := codec.(CapabilityCodec); ok {
		return c.Capabilities()
	}
	return nil
}

// handlerConn carries a consumer's Conn in its handlers' context, for
// AddHandlerCapabilities.
type handlerConn struct{}

// AddHandlerCapabilities records, from a handler's context, that the
// service uses caps through the Conn whose consumer runs the handler: a
// handler wrapper that brings a capability (idempotency.Handler) is given
// no Conn. Outside a consumer's handler it does nothing, and reports false.
func AddHandlerCapabilities(ctx context.Context, caps ...contract.Capability) bool {
	c, ok := ctx.Value(handlerConn{}).(*Conn)
	if ok {
		c.AddCapabilities(caps...)
	}
	return ok
}

// Capabilities is every member's: a consumer decoding with Codecs uses them
// all.
func (c composite) Capabilities() []contract.Capability {
	var caps []contract.Capability
	for _, m := range c {
		caps = append(caps, CodecCapabilities(m)...)
	}
	return caps
}
