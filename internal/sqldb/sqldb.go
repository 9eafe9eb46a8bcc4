// Package sqldb is what the SQL stores (schemaregistry/sqlregistry,
// idempotency/sqlstore, outbox/sqlstore) share over database/sql, without
// a driver: their options (Options), the making and checking of a table
// (Migrate), and making a migrated store on a database just opened. The
// drivers are opened by sqldb/sqlite and sqldb/postgres, which only the
// stores' own driver packages import.
package sqldb

import (
	"context"
	"database/sql"
	"strings"
)

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Migrator is a store: Migrate makes its tables.
type Migrator interface{ Migrate(context.Context) error }

// Migrated returns the store newStore makes on db, its tables made
// (Migrate). When either fails, db is closed: no store owns it.
func Migrated[S Migrator](ctx context.Context, db *sql.DB, newStore func(*sql.DB) (S, error)) (S, error) {
	s, err := newStore(db)
	if err == nil {
		err = s.Migrate(ctx)
	}
	if err != nil {
		db.Close()
		var none S
		return none, err
	}
	return s, nil
}

// MissingColumns reads the columns of table and says which of want it
// lacks, compared ignoring case: a table of the name that another library
// made has others.
func MissingColumns(ctx context.Context, q Querier, table string, want []string) (have, missing []string, err error) {
	rows, err := q.QueryContext(ctx, "SELECT * FROM "+table+" WHERE 1 = 0")
	if err != nil {
		return nil, nil, err
	}
	have, err = rows.Columns()
	rows.Close()
	if err != nil {
		return nil, nil, err
	}
	for _, c := range want {
		found := false
		for _, h := range have {
			found = found || strings.EqualFold(c, h)
		}
		if !found {
			missing = append(missing, c)
		}
	}
	return have, missing, nil
}
