package request

import (
	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// useOn records on conn, for /acemq-info (package actuator), that the
// service uses request-reply, and what the client's or responder's codec
// brings.
func useOn(conn *acemq.Conn, codec acemq.Codec) {
	conn.AddCapabilities(append([]contract.Capability{contract.CapabilityRequestReply}, acemq.CodecCapabilities(codec)...)...)
}
