package contract

import "time"

// The transactional outbox's table (section 16: Ruby's columns, the one of
// the family that keeps any body) and its limits.
const (
	// DefaultOutboxTable is the outbox's table, the family's name.
	DefaultOutboxTable = "acemq_outbox"
	// OutboxPendingSuffix names the index on (published_at, created_at):
	// the table's name and this.
	OutboxPendingSuffix = "_pending"
	// OutboxUnsentSuffix names this library's own index beside it, on
	// (id) where published_at IS NULL: a claim takes the first unpublished
	// records in id order, which the family's index cannot serve, so that
	// without it every claim reads past each published record kept.
	OutboxUnsentSuffix = "_unsent"
	// OutboxBodyText is the body_encoding of a body kept as it is: UTF-8
	// without a NUL byte (which PostgreSQL's TEXT cannot hold).
	OutboxBodyText = "text"
	// OutboxBodyBase64 is the body_encoding of any other body: standard
	// base64 with padding (RFC 4648 section 4).
	OutboxBodyBase64 = "base64"
	// OutboxMaxAttempts is how many failed publishes of a record the relay
	// counts before it stops offering it.
	OutboxMaxAttempts = 10
	// OutboxMaxError is the length, in characters, of last_error: a longer
	// error is cut to it.
	OutboxMaxError = 1000
	// OutboxLease is how long a relay's claim on a record holds: after it,
	// another relay may take the record, its holder presumed dead.
	OutboxLease = 60 * time.Second
	// OutboxSQLiteTimeLayout is how the SQLite store writes created_at,
	// published_at and locked_until (SQLite has no time type): the
	// idempotency table's layout, which sorts as the times do.
	OutboxSQLiteTimeLayout = IdempotencySQLiteTimeLayout
)
