package harness

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/contract"
)

// The raw idempotent loops of IdempotentConsume: amqp091-go consuming at
// concurrency 8, each delivery claimed and confirmed in the store's own
// table with plain SQL, one statement each per message (the store's SQL
// before it grouped its writes): the fair equivalent of the idempotent
// consumer, where the plain consumer is the target's baseline.
const (
	RawIdemSQLite   = "raw idempotent sqlite"
	RawIdemPostgres = "raw idempotent postgres"
)

// rawIdempotent consumes n messages from queue as the raw idempotent loop,
// on a fresh table of db ("sqlite" or "postgres").
func (r *Runner) rawIdempotent(ctx context.Context, db, queue string, n int) (err error) {
	s, err := r.openIdempotent(ctx, db, queue)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.close()) }()
	sqlite := db == "sqlite"
	param := func(i int) string {
		if sqlite {
			return "?"
		}
		return "$" + strconv.Itoa(i)
	}
	at := func(t time.Time) any {
		if sqlite {
			return t.UTC().Format(contract.IdempotencySQLiteTimeLayout)
		}
		return t.UTC()
	}
	t, p1, p2, p3, p4 := s.store.Table(), param(1), param(2), param(3), param(4)
	claim := "INSERT INTO " + t + " AS cur (message_id, state, claimed_by, recorded_at, expires_at) VALUES (" +
		strings.Join([]string{p1, "'" + contract.IdempotencyClaimed + "'", p2, p3, p4}, ", ") + ")" +
		" ON CONFLICT (message_id) DO UPDATE SET state = excluded.state, claimed_by = excluded.claimed_by," +
		" recorded_at = excluded.recorded_at, expires_at = excluded.expires_at" +
		" WHERE cur.expires_at <= excluded.recorded_at RETURNING message_id"
	confirm := "INSERT INTO " + t + " AS cur (message_id, state, recorded_at, expires_at) VALUES (" +
		strings.Join([]string{p1, "'" + contract.IdempotencyConfirmed + "'", p2, p3}, ", ") + ")" +
		" ON CONFLICT (message_id) DO UPDATE SET state = excluded.state, recorded_at = excluded.recorded_at, expires_at = excluded.expires_at"
	read := "SELECT state FROM " + t + " WHERE message_id = " + p1
	sdb := s.store.DB()
	return r.Raw.consume(ctx, queue, n, 8, func(d amqp.Delivery) (bool, error) {
		now := time.Now()
		var got string
		err := sdb.QueryRowContext(ctx, claim, d.MessageId, "raw", at(now), at(now.Add(contract.DefaultClaimTimeout))).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) { // held: a duplicate, or another consumer's
			var state string
			if err := sdb.QueryRowContext(ctx, read, d.MessageId).Scan(&state); err != nil {
				return false, err
			}
			if state == contract.IdempotencyConfirmed {
				return true, d.Ack(false)
			}
			return false, d.Nack(false, true)
		}
		if err != nil {
			return false, err
		}
		// The handler's work would be here.
		now = time.Now()
		if _, err := sdb.ExecContext(ctx, confirm, d.MessageId, at(now), at(now.Add(contract.DefaultIdempotencyRetention))); err != nil {
			return false, err
		}
		return true, d.Ack(false)
	})
}
