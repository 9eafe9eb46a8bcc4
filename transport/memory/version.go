package memory

import (
	"fmt"
	"strings"
)

// emulation is what memory:// does differently for each RabbitMQ version it
// emulates: what the conformance suite measured on a RabbitMQ 3.10.8 and a
// 4.0.5 node (see docs/memory.md). Where only those two were measured, the
// change is marked v4 although it may have come in a 3.11 to 3.13 release.
type emulation struct {
	version string // as the broker reports it: "4.0.5"
	// maxMessageSize is the default max_message_size: 16 MiB from 4.0,
	// 128 MiB before.
	maxMessageSize int
	// deathRecords (RabbitMQ 3.13): the broker keeps a message's deaths
	// itself. A dead letter carries x-last-death-* too, and the x-death a
	// client published (a republished dead letter) counts for nothing: it is
	// replaced by the broker's own record.
	deathRecords bool
	// v4: RabbitMQ 4.0. Quorum queues: a message requeued by nack or
	// reject goes to the front like one a closing channel returned, in the
	// order returned; x-delivery-count appears only once the message has
	// been returned (a publisher's own passes until then); x-delivery-limit
	// is 20 unless set (a negative or non-integer one: none). Classic
	// queues: x-queue-master-locator is not checked, x-queue-leader-locator
	// applies, a queue's type is classic when it names none (in refusals
	// too), and x-single-active-consumer hands over as soon as the active
	// consumer is cancelled. An unknown exchange type is PRECONDITION_FAILED
	// on the channel, not COMMAND_INVALID on the connection.
	v4 bool
}

// emulations are the versions memory:// emulates, the default first.
var emulations = []*emulation{
	{version: "4.0.5", maxMessageSize: 16 << 20, deathRecords: true, v4: true},
	{version: "3.10.8", maxMessageSize: 128 << 20},
}

// emulationOf finds the emulation of version v: its full number or its
// major and minor ("3.10"), or for 4.0 its major alone ("4").
func emulationOf(v string) (*emulation, error) {
	for _, em := range emulations {
		minor := em.version[:strings.LastIndexByte(em.version, '.')]
		if v == em.version || v == minor || v+".0" == minor {
			return em, nil
		}
	}
	names := make([]string, len(emulations))
	for i, em := range emulations {
		names[i] = em.version
	}
	return nil, fmt.Errorf("RabbitMQ %q is not a version memory:// emulates (%s; the first is the default)", v, strings.Join(names, ", "))
}
