// Package postgres opens a schema registry (package sqlregistry) in a
// PostgreSQL database, through github.com/jackc/pgx/v5's database/sql
// driver, so that every service on the database gives a schema the same id.
//
// The registry speaks database/sql, one implementation for SQLite and
// PostgreSQL; a program that already has a pgxpool.Pool passes
// stdlib.OpenDBFromPool(pool) to sqlregistry.New with
// sqlregistry.PostgreSQL instead of opening a second pool here.
//
// It is a package of its own so that only a program importing it links and
// downloads pgx.
package postgres

import (
	"context"
	"database/sql"

	pgdb "github.com/acemq-go/acemq/internal/sqldb/postgres"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry"
)

// Open connects to the PostgreSQL database at url (a postgres:// URL or a
// "host=... dbname=..." string, as pgx reads them) and returns a migrated
// registry in it that owns the connection pool: its Close closes it.
func Open(ctx context.Context, url string, opts ...sqlregistry.Option) (*sqlregistry.Registry, error) {
	return pgdb.OpenMigrated(ctx, "schema registry", url, func(db *sql.DB) (*sqlregistry.Registry, error) {
		return sqlregistry.New(db, sqlregistry.PostgreSQL, append(opts, sqlregistry.OwnDB())...)
	})
}

// OpenDB returns a pool of connections to url, for sqlregistry.New with
// sqlregistry.PostgreSQL. It connects only when first used.
func OpenDB(url string) (*sql.DB, error) {
	return pgdb.OpenFor("schema registry", url)
}
