// Package sqldb is what the SQL stores (schemaregistry/sqlregistry,
// idempotency/sqlstore) share over database/sql, without a driver: the
// check that a table of the store's name is the store's. The drivers are
// opened by sqldb/sqlite and sqldb/postgres, which only the stores' own
// driver packages import.
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
