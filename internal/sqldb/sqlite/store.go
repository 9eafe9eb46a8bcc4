package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acemq-go/acemq/internal/sqldb"
)

// OpenFor is Open for a store, what ("outbox"), its errors saying whose.
func OpenFor(what, path string) (*sql.DB, error) {
	db, err := Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return db, nil
}

// OpenMigrated opens the database at path and returns the store newStore
// makes on it, migrated (sqldb.Migrated): newStore makes it own the
// database. Its errors name the database.
func OpenMigrated[S sqldb.Migrator](ctx context.Context, what, path string, newStore func(*sql.DB) (S, error)) (S, error) {
	db, err := OpenFor(what, path)
	if err != nil {
		var none S
		return none, err
	}
	s, err := sqldb.Migrated(ctx, db, newStore)
	if err != nil {
		return s, fmt.Errorf("%w (SQLite database %s)", err, path)
	}
	return s, nil
}
