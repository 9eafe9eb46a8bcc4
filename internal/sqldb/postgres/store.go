package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acemq-go/acemq/internal/sqldb"
)

// OpenFor is Open for a store, what ("outbox"), its errors saying whose.
func OpenFor(what, url string) (*sql.DB, error) {
	db, err := Open(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return db, nil
}

// OpenMigrated connects to url and returns the store newStore makes on the
// pool, migrated (sqldb.Migrated): newStore makes it own the pool.
func OpenMigrated[S sqldb.Migrator](ctx context.Context, what, url string, newStore func(*sql.DB) (S, error)) (S, error) {
	db, err := OpenFor(what, url)
	if err != nil {
		var none S
		return none, err
	}
	return sqldb.Migrated(ctx, db, newStore)
}
