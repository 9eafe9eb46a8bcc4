package schedule

import (
	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

// useOn records on conn, for /acemq-info (package actuator), that the
// service schedules messages, and what the scheduler's codec brings.
func useOn(conn *acemq.Conn, codec acemq.Codec) {
	conn.AddCapabilities(append([]contract.Capability{contract.CapabilityScheduler}, acemq.CodecCapabilities(codec)...)...)
}
