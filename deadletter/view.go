package deadletter

import (
	"errors"
	"fmt"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/transport"
)

// ErrNotViewable: a view does not read this queue's messages, since
// reading them could change it (see Viewable).
var ErrNotViewable = errors.New("its messages are not read by a view")

// Viewable says whether a view (a listing, a page, a count of reasons) may
// read q's messages: nil when q is a dead-letter or parked queue (Q.dlq,
// Q.parked, by name) of the classic type, else why not, matching
// ErrNotViewable.
//
// A view reads a queue by taking its messages and handing them back
// (Browse). A classic queue counts nothing for that, on every RabbitMQ
// version: it has no delivery limit, and the messages go back to their
// places. A quorum queue counts each handing back as a delivery, and
// dead-letters a message past its x-delivery-limit (which RabbitMQ 4 sets
// to 20 on every quorum queue), so looking could move it; a stream cannot
// be read this way at all. The contract declares Q.dlq and Q.parked
// classic, but a team may have declared its own otherwise. A live source
// queue or a rung is never read: its messages belong to its consumers.
// The type is the broker's (the management API's): AMQP does not tell it.
func Viewable(q acemq.QueueDeclaration) error {
	if _, ok := Source(q.Name); !ok {
		return fmt.Errorf("%s: %w: only a dead-letter or parked queue (a name ending in .dlq or .parked) is read, never a live queue or a retry rung", q.Name, ErrNotViewable)
	}
	if q.Type != transport.Classic {
		return fmt.Errorf("%s is a %s queue: %w: a %s queue counts each message read and handed back as a delivery, so a view could dead-letter it; only a classic queue is read", q.Name, typeName(q.Type), ErrNotViewable, typeName(q.Type))
	}
	return nil
}

func typeName(t transport.QueueType) string {
	if t == "" {
		return "(type not known)"
	}
	return string(t)
}
