// Package postgres opens a PostgreSQL database for the SQL stores through
// pgx's database/sql driver.
package postgres

import (
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Open returns a pool of connections to url (a postgres:// URL or a
// "host=... dbname=..." string, as pgx reads them). It connects only when
// first used.
func Open(url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's error repeats the URL, password and all: say what, not that.
		return nil, errors.New("the PostgreSQL URL does not parse")
	}
	return stdlib.OpenDB(*cfg), nil
}
