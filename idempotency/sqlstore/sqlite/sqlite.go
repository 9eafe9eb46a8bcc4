// Package sqlite opens an idempotency store (package sqlstore) in a SQLite
// database, through modernc.org/sqlite: SQLite compiled to Go, so neither
// cgo nor a C toolchain is needed. It suits consumers on one machine
// sharing a file; consumers on several machines share a PostgreSQL table
// (sqlstore/postgres). Times are kept as RFC 3339 UTC text with three
// fractional digits (see sqlstore).
//
// It is a package of its own so that only a program importing it links and
// downloads modernc.org/sqlite.
package sqlite

import (
	"context"
	"database/sql"

	"github.com/acemq-go/acemq/idempotency/sqlstore"

	sqlitedb "github.com/acemq-go/acemq/internal/sqldb/sqlite"
)

// BusyTimeoutMillis is how long a connection waits for another writer to
// the same file before failing with SQLITE_BUSY.
const BusyTimeoutMillis = sqlitedb.BusyTimeoutMillis

// Open opens (creating it if need be) the SQLite database at path, a file
// name, ":memory:", or a modernc.org/sqlite DSN ("file:..."), and returns a
// migrated store in it that owns it: its Close closes the database. Files
// are put in WAL mode; an in-memory database lives in one connection, so
// the pool is held to that one.
func Open(ctx context.Context, path string, opts ...sqlstore.Option) (*sqlstore.Store, error) {
	return sqlitedb.OpenMigrated(ctx, "idempotency", path, func(db *sql.DB) (*sqlstore.Store, error) {
		return sqlstore.New(db, sqlstore.SQLite, append(opts, sqlstore.OwnDB())...)
	})
}

// OpenDB opens the SQLite database at path (as Open takes it) with the
// settings Open uses, for sqlstore.New with sqlstore.SQLite.
func OpenDB(path string) (*sql.DB, error) {
	return sqlitedb.OpenFor("idempotency", path)
}
