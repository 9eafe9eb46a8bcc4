// Package outbox is the transactional outbox (CONTRACT.md section 16): a
// service writes its business rows and the message it means to publish in
// one database transaction, so that the message is sent if and only if the
// transaction commits, and a Relay publishes the records with confirms.
//
// A record is a whole AceMQ message: Encode writes the envelope a Publisher
// writes (x-acemq-id, type, version, correlation, attempt, first-seen,
// origin) and the body as its codec encodes it, so that a consumer of any
// AceMQ library reads what the relay publishes. The table is Ruby's
// (exchange_name, routing_key, body, body_encoding, content_type, headers,
// created_at, published_at, attempts, last_error, locked_by, locked_until);
// package outbox/sqlstore keeps it in SQLite or PostgreSQL, and writes
// records in a *sql.Tx (sqlstore/postgres in a pgx.Tx too).
//
// The relay's guarantees:
//   - a record is marked published only once the broker has confirmed it,
//     so a record is never lost: a relay killed at any point leaves its
//     records to be offered again when its lease ends;
//   - a record is offered to one relay at a time, under a lease
//     (contract.OutboxLease); a record is published twice only when its
//     relay died (or could not reach the database) between the confirm and
//     the mark, or took longer than its lease: at least once, never
//     quietly dropped, duplicates bounded by the lease;
//   - a relay publishes its batch in id order; with Ordered, record n+1 is
//     published only once record n is confirmed, whatever fails;
//   - failures are counted (attempts) with the last error (last_error, cut
//     to contract.OutboxMaxError characters), and a record that failed
//     contract.OutboxMaxAttempts times is no longer offered but stays in
//     the table, counted by Lag as given up.
package outbox
