package memory

import (
	"fmt"
	"strings"
)

// emulation is what memory:// does differently for each RabbitMQ version it
// emulates: what the conformance suite measured on RabbitMQ 3.10.8, 4.0.5
// and 4.3.6 nodes (see docs/memory.md). Where only those were measured, a
// change is marked v4 although it may have come in a 3.11 to 3.13 release,
// and v43 although it may have come in 4.1 or 4.2.
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
	// v43: RabbitMQ 4.3. A delivery fails when it is rejected (with
	// requeue or not) or returned by a closing channel; a nack (with
	// requeue or not) is no failure. A quorum queue's x-delivery-count
	// counts the failures, from the first one on, its new x-acquired-count
	// every return, a nack's too, from the first one on (each lets a
	// publisher's own pass until then), and x-delivery-limit counts the
	// failures: a nack loop never reaches it. A dead letter keeps its
	// message's failures: one that had any is delivered redelivered from
	// its first delivery on. A stream's x-max-age is kept and compared as
	// milliseconds: 604800s and 7D are one.
	v43 bool
}

// emulations are the versions memory:// emulates, the default first.
var emulations = []*emulation{
	{version: "4.3.6", maxMessageSize: 16 << 20, deathRecords: true, v4: true, v43: true},
	{version: "4.0.5", maxMessageSize: 16 << 20, deathRecords: true, v4: true},
	{version: "3.10.8", maxMessageSize: 128 << 20},
}

// emulationOf finds the emulation of version v: its full number or its
// major and minor ("3.10"), or for 4.0 its major alone ("4", as before 4.3
// was emulated).
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
