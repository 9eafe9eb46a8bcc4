package contract

import "time"

// The default tables of the SQL stores that services sharing a database
// share (section 16). The family names the schema registry's table three
// ways (Java, Ruby and Python acemq_schema_registry, the other Go library
// acemq_schemas, .NET acemq_schema); this library takes the majority's. The
// columns differ across the family, so a table is shared with this
// library's own registries only.
const (
	DefaultSchemaRegistryTable = "acemq_schema_registry"
	// DefaultIdempotencyTable is the idempotent consumer's table; its
	// columns are the Java and Ruby libraries' own, so the three share it.
	DefaultIdempotencyTable = "acemq_idempotency"
)

// The idempotency table's states and limits (section 16).
const (
	// IdempotencyClaimed: a consumer is handling the message now.
	IdempotencyClaimed = "CLAIMED"
	// IdempotencyConfirmed: the message was handled; a copy of it is a
	// duplicate until the row expires.
	IdempotencyConfirmed = "CONFIRMED"
	// IdempotencyExpirySuffix names the index on expires_at: the table's
	// name and this.
	IdempotencyExpirySuffix = "_expiry"
	// IdempotencyMaxKey and IdempotencyMaxOwner are the lengths, in
	// characters, of the message_id and claimed_by columns.
	IdempotencyMaxKey   = 255
	IdempotencyMaxOwner = 64
	// IdempotencySQLiteTimeLayout is how the SQLite store writes
	// recorded_at and expires_at (SQLite has no time type): RFC 3339 UTC
	// with exactly three fractional digits, so that comparing the text
	// compares the times. It is the layout of acemq-replayed-at.
	IdempotencySQLiteTimeLayout = ReplayedAtLayout
	// DefaultClaimTimeout is how long a claim holds before another
	// consumer may take it over, its holder presumed dead.
	DefaultClaimTimeout = 5 * time.Minute
	// DefaultIdempotencyRetention is how long a confirmed message is
	// remembered: a copy of it within that time is a duplicate.
	DefaultIdempotencyRetention = 24 * time.Hour
)
