// Package postgres opens an idempotency store (package sqlstore) in a
// PostgreSQL database, through github.com/jackc/pgx/v5's database/sql
// driver, so that every consumer on the database, on any machine and in
// any AceMQ library sharing the table, handles a message once.
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

	"github.com/acemq-go/acemq/idempotency/sqlstore"
	pgdb "github.com/acemq-go/acemq/internal/sqldb/postgres"
)

// Open connects to the PostgreSQL database at url (a postgres:// URL or a
// "host=... dbname=..." string) and returns a migrated store in it that
// owns the pool: its Close closes it.
func Open(ctx context.Context, url string, opts ...sqlstore.Option) (*sqlstore.Store, error) {
	return pgdb.OpenMigrated(ctx, "idempotency", url, func(db *sql.DB) (*sqlstore.Store, error) {
		return sqlstore.New(db, sqlstore.PostgreSQL, append(opts, sqlstore.OwnDB())...)
	})
}

// OpenDB returns a pool of connections to url, for sqlstore.New with
// sqlstore.PostgreSQL. It connects only when first used.
func OpenDB(url string) (*sql.DB, error) {
	return pgdb.OpenFor("idempotency", url)
}
