package claimcheck

import (
	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

var _ acemq.CapabilityCodec = (*Codec)(nil)

// Capabilities is claim-check and the inner codec's: a Conn whose publisher
// or consumer is given c lists them at /acemq-info (package actuator).
func (c *Codec) Capabilities() []contract.Capability {
	return append([]contract.Capability{contract.CapabilityClaimCheck}, acemq.CodecCapabilities(c.inner)...)
}
