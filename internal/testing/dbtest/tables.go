package dbtest

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"

	pgdb "github.com/acemq-go/acemq/internal/sqldb/postgres"
)

// DropWhenDone drops table from the PostgreSQL database at url when t
// ends, so that the shared test server keeps no test's tables.
func DropWhenDone(t testing.TB, url, table string) {
	t.Cleanup(func() {
		db, err := pgdb.Open(url)
		if err != nil {
			t.Errorf("dropping %s: %v", table, err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table); err != nil {
			t.Errorf("dropping %s: %v", table, err)
		}
	})
}

// Columns lists the columns of table in db (PostgreSQL), in order, each as
// "name type length nullable" from information_schema: "id bigint 0 NO".
func Columns(t testing.TB, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT column_name, data_type, COALESCE(character_maximum_length, 0), is_nullable
		FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name, typ, nullable string
		var n int
		if err := rows.Scan(&name, &typ, &n, &nullable); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{name, typ, strconv.Itoa(n), nullable}, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
