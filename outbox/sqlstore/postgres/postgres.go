// Package postgres opens the outbox's table (package sqlstore) in a
// PostgreSQL database, through github.com/jackc/pgx/v5's database/sql
// driver, and writes records in a pgx transaction (Write) for services
// that use pgx directly.
//
// A program that already has a pgxpool.Pool passes
// stdlib.OpenDBFromPool(pool) to sqlstore.New with sqlstore.PostgreSQL
// instead of opening a second pool here.
//
// It is a package of its own so that only a program importing it links and
// downloads pgx.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	pgdb "github.com/acemq-go/acemq/internal/sqldb/postgres"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
)

// Open connects to the PostgreSQL database at url (a postgres:// URL or a
// "host=... dbname=..." string) and returns a migrated store in it that
// owns the pool: its Close closes it.
func Open(ctx context.Context, url string, opts ...sqlstore.Option) (*sqlstore.Store, error) {
	return pgdb.OpenMigrated(ctx, "outbox", url, func(db *sql.DB) (*sqlstore.Store, error) {
		return sqlstore.New(db, sqlstore.PostgreSQL, append(opts, sqlstore.OwnDB())...)
	})
}

// OpenDB returns a pool of connections to url, for sqlstore.New with
// sqlstore.PostgreSQL. It connects only when first used.
func OpenDB(url string) (*sql.DB, error) {
	return pgdb.OpenFor("outbox", url)
}

// Write adds m to store's outbox in tx, the caller's pgx transaction, and
// returns the record's id, as sqlstore.Store.Write does in a *sql.Tx: the
// relay publishes it once tx commits, and never if it rolls back.
func Write(ctx context.Context, tx pgx.Tx, store *sqlstore.Store, m outbox.Message) (int64, error) {
	if tx == nil || store == nil {
		return 0, errors.New("outbox: Write needs a transaction and a store")
	}
	if store.Dialect().String() != sqlstore.PostgreSQL.String() {
		return 0, fmt.Errorf("outbox: Write in a pgx transaction needs a PostgreSQL store, not %s", store.Dialect())
	}
	query, args, err := store.InsertStatement(m)
	if err != nil {
		return 0, err
	}
	var id int64
	if err := tx.QueryRow(ctx, query, args...).Scan(&id); err != nil {
		return 0, fmt.Errorf("outbox: write a record to table %s: %w", store.Table(), err)
	}
	return id, nil
}
