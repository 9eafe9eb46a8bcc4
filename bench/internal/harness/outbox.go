package harness

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
)

// The outbox relay's scenarios: records written beforehand, then timed
// from the first claim until every record is published and marked.
const (
	OutboxRelaySQLite   = "outbox relay (SQLite)"
	OutboxRelayPostgres = "outbox relay (PostgreSQL)"
	// RawLeasedRelay is the raw loop claiming its batch under a lease as
	// the relay does (an UPDATE ... RETURNING, not a SELECT): the relay's
	// like-for-like baseline.
	RawLeasedRelay = "raw+lease"
)

// OutboxOptions size the outbox scenarios.
type OutboxOptions struct {
	URL         string // the broker
	PostgresURL string // "" leaves PostgreSQL out
	Records     int
	Batch       int
	Rounds      int
	Dir         string // for the SQLite files
	Log         io.Writer
}

// RunOutbox runs the outbox scenarios: raw (a loop that selects a batch of
// rows, publishes them with amqp091-go confirms and updates them),
// raw+lease (the same loop claiming its batch under a lease: acemq's
// baseline) and acemq (outbox.Relay.Run until every record is marked),
// alternating, round after round, each on a table and a queue of its own.
func RunOutbox(ctx context.Context, b *Broker, o OutboxOptions) []Series {
	type db struct {
		scenario string
		open     func(table string) (*sqlstore.Store, error)
	}
	dbs := []db{{OutboxRelaySQLite, func(table string) (*sqlstore.Store, error) {
		return sqlite.Open(ctx, filepath.Join(o.Dir, table+".db"), sqlstore.WithTable(table))
	}}}
	if o.PostgresURL != "" {
		dbs = append(dbs, db{OutboxRelayPostgres, func(table string) (*sqlstore.Store, error) {
			return postgres.Open(ctx, o.PostgresURL, sqlstore.WithTable(table))
		}})
	}
	var all []Series
	for _, d := range dbs {
		series := []Series{
			{Scenario: d.scenario, Implementation: "raw", Messages: o.Records},
			{Scenario: d.scenario, Implementation: RawLeasedRelay, Messages: o.Records},
			{Scenario: d.scenario, Implementation: "acemq", Messages: o.Records, Baseline: RawLeasedRelay},
		}
		for round := 1; round <= o.Rounds; round++ {
			for i := range series {
				s := &series[i]
				table := fmt.Sprintf("bench_outbox_%s_%d_%d", time.Now().UTC().Format("150405"), round, i)
				sample, err := outboxRound(ctx, b, o, d.open, table, s.Implementation)
				if err != nil {
					s.Errors = append(s.Errors, fmt.Sprintf("round %d: %v", round, err))
					fmt.Fprintf(o.Log, "%-28s %-9s round %d: %v\n", d.scenario, s.Implementation, round, err)
					continue
				}
				sample.Round = round
				s.Samples = append(s.Samples, sample)
				fmt.Fprintf(o.Log, "%-28s %-9s round %d: %d records in %.3fs\n", d.scenario, s.Implementation, round, o.Records, sample.Elapsed.Seconds())
			}
		}
		all = append(all, series...)
	}
	return all
}

func outboxRound(ctx context.Context, b *Broker, o OutboxOptions, open func(string) (*sqlstore.Store, error), table, impl string) (s Sample, err error) {
	store, err := open(table)
	if err != nil {
		return s, err
	}
	defer store.Close()
	defer func() { _, _ = store.DB().ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) }()
	queue := strings.ReplaceAll(table, "_", "-")
	if err := b.DeclareQueue(queue, nil); err != nil {
		return s, err
	}
	defer func() { _ = b.DeleteScenarioQueues(queue) }()
	tx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		return s, err
	}
	for i := range o.Records {
		if _, err := store.Write(ctx, tx, outbox.Message{RoutingKey: queue, Body: NewPayload(i)}); err != nil {
			tx.Rollback()
			return s, err
		}
	}
	if err := tx.Commit(); err != nil {
		return s, err
	}
	if impl == "raw" || impl == RawLeasedRelay {
		return rawRelay(ctx, o, store.DB(), store.Dialect().String() == sqlstore.PostgreSQL.String(), table, impl == RawLeasedRelay)
	}
	conn, err := acemq.Connect(ctx, o.URL, acemq.WithConnectionName("bench outbox"))
	if err != nil {
		return s, err
	}
	defer conn.Close()
	marks := &markCounter{Store: store, done: make(chan struct{})}
	marks.left.Store(int64(o.Records))
	relay, err := outbox.NewRelay(marks, conn, outbox.WithBatchSize(o.Batch))
	if err != nil {
		return s, err
	}
	// Run, as a service runs the relay: it claims a batch ahead while one
	// is published. Timed until the last record is marked.
	running, stopRelay := context.WithCancel(ctx)
	ran := make(chan error, 1)
	stop := measure()
	go func() { ran <- relay.Run(running) }()
	select {
	case <-marks.done:
	case <-ctx.Done():
	}
	s = stop()
	stopRelay()
	if err := errors.Join(<-ran, ctx.Err()); err != nil {
		return s, err
	}
	if st := relay.Stats(); st.Published != int64(o.Records) || st.Failed+st.Unanswered > 0 {
		return s, fmt.Errorf("published %d of %d, %d failed, %d unanswered", st.Published, o.Records, st.Failed, st.Unanswered)
	}
	return s, nil
}

// markCounter is the relay's store, done once every record is marked.
type markCounter struct {
	outbox.Store
	left atomic.Int64
	done chan struct{}
}

func (m *markCounter) Published(ctx context.Context, ids []int64) error {
	err := m.Store.Published(ctx, ids)
	if err == nil && len(ids) > 0 && m.left.Add(-int64(len(ids))) == 0 {
		close(m.done)
	}
	return err
}

// rawRelay is the relay's loop by hand: select a batch of unpublished
// rows, publish each with amqp091-go (persistent, mandatory, confirmed,
// the stored headers), wait for the confirms, mark them published; no
// failure counting. With lease, the batch is claimed as the relay claims
// it (a write: owner and expiry set, FOR UPDATE SKIP LOCKED on
// PostgreSQL) and the mark clears the lease, else it is a plain SELECT.
func rawRelay(ctx context.Context, o OutboxOptions, db *sql.DB, pg bool, table string, lease bool) (Sample, error) {
	conn, err := amqp.Dial(o.URL)
	if err != nil {
		return Sample{}, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return Sample{}, err
	}
	if err := ch.Confirm(false); err != nil {
		return Sample{}, err
	}
	param := func(n int) string {
		if pg {
			return "$" + strconv.Itoa(n)
		}
		return "?"
	}
	now := func() any {
		if pg {
			return time.Now().UTC()
		}
		return time.Now().UTC().Format(contract.OutboxSQLiteTimeLayout)
	}
	query, args := "SELECT id, routing_key, body, content_type, headers FROM "+table+
		" WHERE published_at IS NULL ORDER BY id LIMIT "+param(1), func() []any { return []any{o.Batch} }
	mark := "UPDATE " + table + " SET published_at = " + param(1)
	if lease {
		skip := ""
		if pg {
			skip = " FOR UPDATE SKIP LOCKED"
		}
		query = "UPDATE " + table + " SET locked_by = " + param(1) + ", locked_until = " + param(2) +
			" WHERE id IN (SELECT id FROM " + table + " WHERE published_at IS NULL AND (locked_until IS NULL OR locked_until <= " + param(3) + ")" +
			" ORDER BY id LIMIT " + param(4) + skip + ") RETURNING id, routing_key, body, content_type, headers"
		args = func() []any {
			at := time.Now()
			return []any{"raw", at.Add(time.Minute).UTC().Format(contract.OutboxSQLiteTimeLayout), now(), o.Batch}
		}
		if pg {
			args = func() []any { at := time.Now().UTC(); return []any{"raw", at.Add(time.Minute), at, o.Batch} }
		}
		mark += ", locked_by = NULL, locked_until = NULL"
	}
	stop := measure()
	published := 0
	for {
		rows, err := db.QueryContext(ctx, query, args()...)
		if err != nil {
			return Sample{}, err
		}
		var ids []any
		var confirms []*amqp.DeferredConfirmation
		for rows.Next() {
			var id int64
			var key, body, ctype, headers string
			if err := rows.Scan(&id, &key, &body, &ctype, &headers); err != nil {
				rows.Close()
				return Sample{}, err
			}
			var h amqp.Table
			if err := json.Unmarshal([]byte(headers), &h); err != nil {
				rows.Close()
				return Sample{}, err
			}
			c, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", key, true, false, amqp.Publishing{
				Headers: h, ContentType: ctype, Body: []byte(body), DeliveryMode: amqp.Persistent})
			if err != nil {
				rows.Close()
				return Sample{}, err
			}
			ids = append(ids, id)
			confirms = append(confirms, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return Sample{}, err
		}
		if len(ids) == 0 {
			break
		}
		for _, c := range confirms {
			ok, err := c.WaitContext(ctx)
			if err != nil || !ok {
				return Sample{}, fmt.Errorf("a publish was not confirmed: %v", err)
			}
		}
		marks := make([]string, len(ids))
		for i := range ids {
			marks[i] = param(i + 2)
		}
		if _, err := db.ExecContext(ctx, mark+" WHERE id IN ("+strings.Join(marks, ", ")+")",
			append([]any{now()}, ids...)...); err != nil {
			return Sample{}, err
		}
		published += len(ids)
	}
	s := stop()
	if published != o.Records {
		return s, fmt.Errorf("published %d of %d", published, o.Records)
	}
	return s, nil
}

func init() { Scenarios = append(Scenarios, OutboxRelaySQLite, OutboxRelayPostgres) }
