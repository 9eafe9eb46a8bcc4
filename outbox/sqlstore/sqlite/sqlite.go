// Package sqlite opens the outbox's table (package sqlstore) in a SQLite
// database, through modernc.org/sqlite: SQLite compiled to Go, so neither
// cgo nor a C toolchain is needed. It suits a service and its relays on one
// machine sharing a file. Times are kept as RFC 3339 UTC text with three
// fractional digits (see sqlstore).
//
// It is a package of its own so that only a program importing it links and
// downloads modernc.org/sqlite.
package sqlite

import (
	"context"
	"database/sql"

	sqlitedb "github.com/acemq-go/acemq/internal/sqldb/sqlite"
	"github.com/acemq-go/acemq/outbox/sqlstore"
)

// Open opens (creating it if need be) the SQLite database at path, a file
// name, ":memory:", or a modernc.org/sqlite DSN ("file:..."), and returns a
// migrated store in it that owns it: its Close closes the database. A
// service writes its records in transactions of store.DB() (or of its own
// *sql.DB on the same file, opened with OpenDB).
func Open(ctx context.Context, path string, opts ...sqlstore.Option) (*sqlstore.Store, error) {
	return sqlitedb.OpenMigrated(ctx, "outbox", path, func(db *sql.DB) (*sqlstore.Store, error) {
		return sqlstore.New(db, sqlstore.SQLite, append(opts, sqlstore.OwnDB())...)
	})
}

// OpenDB opens the SQLite database at path (as Open takes it) with the
// settings Open uses (WAL, a busy timeout), for sqlstore.New with
// sqlstore.SQLite.
func OpenDB(path string) (*sql.DB, error) {
	return sqlitedb.OpenFor("outbox", path)
}
