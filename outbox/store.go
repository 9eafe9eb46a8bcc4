package outbox

import (
	"context"
	"time"
)

// Store is an outbox table as a relay works it: claims of due records
// under a lease, and what became of each. Its methods are safe for
// concurrent use by goroutines and by processes: of the relays claiming at
// once, each record is given to one, until its lease ends. Package
// outbox/sqlstore is the Store of SQLite and PostgreSQL.
type Store interface {
	// Claim leases due records to c.Owner until c.Lease has passed, in id
	// order: unpublished, failed fewer than c.MaxAttempts times, and
	// neither leased (an expired lease does not count) nor waiting out a
	// retry delay. With c.Ordered it claims only the first records of the
	// table still unpublished, up to the first that is not due, and none
	// while another owner holds a lease.
	Claim(ctx context.Context, c Claim) ([]Record, error)
	// Published marks the records published, now, and ends their leases; a
	// record marked already keeps the time it was first marked.
	Published(ctx context.Context, ids []int64) error
	// Failed records a failed publish of a record: its error (cut to
	// contract.OutboxMaxError characters), one more attempt when counted,
	// and no lease, the record offered again after retryDelay; a record no
	// longer leased to f.Owner is left alone.
	Failed(ctx context.Context, f Failure) error
	// Release gives up owner's leases on the records, unpublished, so that
	// they are offered again at once.
	Release(ctx context.Context, owner string, ids []int64) error
	// Lag says how far behind the relays are.
	Lag(ctx context.Context, maxAttempts int) (Lag, error)
	// Prune deletes the records published more than retention ago, and
	// says how many.
	Prune(ctx context.Context, retention time.Duration) (int64, error)
}

// Claim is what Store.Claim asks for.
type Claim struct {
	Owner       string
	Limit       int
	Lease       time.Duration
	MaxAttempts int
	Ordered     bool
}

// Failure is a failed publish of a record, as Store.Failed records it.
type Failure struct {
	ID int64
	// Owner is the relay that publishes the record: a failure is recorded
	// only while its lease is Owner's, so that a relay whose lease was
	// taken over cannot clear the new holder's.
	Owner string
	Error string
	// Counted: the failure counts towards MaxAttempts (the broker said no,
	// or the row cannot be read); a publish the broker never answered
	// (connection lost, timed out) is recorded but not counted.
	Counted    bool
	RetryDelay time.Duration
}

// Lag is how far behind the relays of an outbox are.
type Lag struct {
	// Pending counts the unpublished records still offered.
	Pending int64
	// GivenUp counts the unpublished records no longer offered, their
	// attempts spent: they wait for a person (last_error says why).
	GivenUp int64
	// Oldest is the age of the oldest unpublished record, given up or
	// not; 0 when every record is published.
	Oldest time.Duration
}
