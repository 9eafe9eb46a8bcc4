package encryption

import (
	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

var _ acemq.CapabilityCodec = codec{}

// Capabilities is encryption and the inner codec's: a Conn whose publisher
// or consumer is given the codec lists them at /acemq-info (package
// actuator).
func (c codec) Capabilities() []contract.Capability {
	return append([]contract.Capability{contract.CapabilityEncryption}, acemq.CodecCapabilities(c.inner)...)
}
