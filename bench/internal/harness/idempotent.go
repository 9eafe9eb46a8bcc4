package harness

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
)

// IdempotentConsume is consume-ack (concurrency 8) with the handler wrapped
// by the idempotent consumer, store by store, beside the plain AceMQ
// consumer in the same round: what a claim and a confirm per message cost.
const IdempotentConsume = "consume-ack, idempotent (concurrency 8)"

// The contenders of IdempotentConsume; their ratios divide by the plain
// acemq consumer's run in the same round.
const (
	IdemPlain    = "acemq"
	IdemMemory   = "idempotency memory"
	IdemSQLite   = "idempotency sqlite"
	IdemPostgres = "idempotency postgres"
	TxSQLite     = "txhandler sqlite"
	TxPostgres   = "txhandler postgres"
)

// idempotentStore is a store fresh for one run (every run sends the same
// message ids), and its work table for TxHandler; close drops what the
// run made.
type idempotentStore struct {
	store *sqlstore.Store
	work  string
	param string
	close func() error
}

// openIdempotent makes a store on a database of db ("sqlite" or
// "postgres") for the run on queue.
func (r *Runner) openIdempotent(ctx context.Context, db, queue string) (*idempotentStore, error) {
	name := "bench_" + strings.ReplaceAll(slug(queue), "-", "_")
	if len(name) > 48 {
		name = name[len(name)-48:]
		name = "b" + strings.TrimLeft(name, "0123456789_")
	}
	s := &idempotentStore{work: name + "_work"}
	switch db {
	case "sqlite":
		dir, err := os.MkdirTemp("", "acemq-bench-idempotency-")
		if err != nil {
			return nil, err
		}
		if s.store, err = sqlite.Open(ctx, filepath.Join(dir, "idempotency.db")); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.param = "?"
		s.close = func() error { s.store.Close(); return os.RemoveAll(dir) }
	default:
		var err error
		if s.store, err = postgres.Open(ctx, r.IdempotencyPostgres, sqlstore.WithTable(name)); err != nil {
			return nil, err
		}
		s.param = "$1"
		s.close = func() error {
			defer s.store.Close()
			_, err := s.store.DB().ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+name+", "+s.work)
			return err
		}
	}
	if _, err := s.store.DB().ExecContext(ctx, "CREATE TABLE "+s.work+" (id VARCHAR(255) NOT NULL)"); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// idempotent are IdempotentConsume's contenders: the plain consumer, the
// raw idempotent loop on each SQL store's table (idempotent_raw.go), the
// handler wrapped with idempotency.Handler on each store, and
// sqlstore.TxHandler inserting a row of work per message in the
// confirm's transaction. PostgreSQL's are left out without
// IdempotencyPostgres. Opening the store, making its table and dropping
// it afterwards are inside the timing (milliseconds, against seconds).
func (r *Runner) idempotent(n int) []contender {
	const concurrency = 8
	plain := func(ctx context.Context, q string) ([]time.Duration, error) {
		return nil, r.AceMQ.ConsumeAck(ctx, q, n, concurrency)
	}
	cs := []contender{{name: IdemPlain, baseline: IdemPlain, preload: r.AceMQ.Preloaded, run: plain}}
	add := func(name, db string, tx bool) {
		cs = append(cs, contender{name: name, baseline: IdemPlain, preload: r.AceMQ.Preloaded,
			run: func(ctx context.Context, q string) ([]time.Duration, error) {
				finished := newCountdown(n)
				var h acemq.Handler[Payload]
				var err error
				closeStore := func() error { return nil }
				switch {
				case db == "memory":
					h, err = idempotency.Handler(idempotency.NewMemory(nil), func(context.Context, acemq.Message[Payload]) acemq.Decision {
						finished.Tick()
						return acemq.Accept()
					})
				default:
					s, oerr := r.openIdempotent(ctx, db, q)
					if oerr != nil {
						return nil, oerr
					}
					closeStore = s.close
					if tx {
						insert := "INSERT INTO " + s.work + " (id) VALUES (" + s.param + ")"
						h, err = sqlstore.TxHandler(s.store, func(ctx context.Context, tx *sql.Tx, m acemq.Message[Payload]) acemq.Decision {
							if _, err := tx.ExecContext(ctx, insert, m.Envelope.ID); err != nil {
								return acemq.Retry(err)
							}
							finished.Tick() // counted before the commit: the wait ends with the last one's
							return acemq.Accept()
						})
					} else {
						h, err = idempotency.Handler(s.store, func(context.Context, acemq.Message[Payload]) acemq.Decision {
							finished.Tick()
							return acemq.Accept()
						})
					}
				}
				if err == nil {
					err = r.AceMQ.consume(ctx, q, finished, h, acemq.WithPrefetch(prefetch), acemq.WithConcurrency(concurrency))
				}
				if cerr := closeStore(); cerr != nil && err == nil {
					err = fmt.Errorf("closing the store: %w", cerr)
				}
				return nil, err
			}})
	}
	addRaw := func(name, db string) {
		cs = append(cs, contender{name: name, baseline: IdemPlain, preload: r.Raw.Preloaded,
			run: timed(func(ctx context.Context, q string) error { return r.rawIdempotent(ctx, db, q, n) })})
	}
	add(IdemMemory, "memory", false)
	addRaw(RawIdemSQLite, "sqlite")
	add(IdemSQLite, "sqlite", false)
	add(TxSQLite, "sqlite", true)
	if r.IdempotencyPostgres != "" {
		addRaw(RawIdemPostgres, "postgres")
		add(IdemPostgres, "postgres", false)
		add(TxPostgres, "postgres", true)
	}
	return cs
}
