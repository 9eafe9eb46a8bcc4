// Package sqlite opens a schema registry (package sqlregistry) in a SQLite
// database, through modernc.org/sqlite: SQLite compiled to Go, so neither
// cgo nor a C toolchain is needed. It is the embedded default, for a
// service (or a test) that has no database server; services that share
// schemas across machines use sqlregistry/postgres.
//
// It is a package of its own so that only a program importing it links and
// downloads modernc.org/sqlite (several megabytes of generated Go).
package sqlite

import (
	"context"
	"database/sql"

	"github.com/acemq-go/acemq/schemaregistry/sqlregistry"

	sqlitedb "github.com/acemq-go/acemq/internal/sqldb/sqlite"
)

// BusyTimeoutMillis is how long a connection waits for another writer to
// the same file before failing with SQLITE_BUSY.
const BusyTimeoutMillis = sqlitedb.BusyTimeoutMillis

// Open opens (creating it if need be) the SQLite database at path, a file
// name, ":memory:", or a modernc.org/sqlite DSN ("file:..." with query
// parameters), and returns a migrated registry in it that owns it: its
// Close closes the database. Files are put in WAL mode, so that readers do
// not wait for a writer. An in-memory database lives in one connection
// (SQLite gives each connection its own), so the pool is held to that one:
// it holds its schemas for as long as the registry is open.
func Open(ctx context.Context, path string, opts ...sqlregistry.Option) (*sqlregistry.Registry, error) {
	return sqlitedb.OpenMigrated(ctx, "schema registry", path, func(db *sql.DB) (*sqlregistry.Registry, error) {
		return sqlregistry.New(db, sqlregistry.SQLite, append(opts, sqlregistry.OwnDB())...)
	})
}

// OpenDB opens the SQLite database at path (as Open takes it) with the
// settings Open uses, for sqlregistry.New with sqlregistry.SQLite.
func OpenDB(path string) (*sql.DB, error) {
	return sqlitedb.OpenFor("schema registry", path)
}
