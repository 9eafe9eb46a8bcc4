package postgres_test

import (
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/internal/txtest"
	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
)

// TxHandler on the test server, each test in tables of its own.
func TestTxHandler(t *testing.T) {
	url := dbtest.PostgresURL(t)
	txtest.Run(t, txtest.Target{
		Open: func(t *testing.T, clock func() time.Time) func() *sqlstore.Store {
			table := dbtest.UniqueName(t, "acemq_idempotency")
			dbtest.DropWhenDone(t, url, table)
			return func() *sqlstore.Store {
				s, err := postgres.Open(t.Context(), url, sqlstore.WithTable(table), sqlstore.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		},
		Work: func(t *testing.T) string {
			table := dbtest.UniqueName(t, "acemq_work")
			dbtest.DropWhenDone(t, url, table)
			return table
		},
		Param: "$1",
		// A row of "bad" already there: a second one breaks the deferred
		// unique constraint, at COMMIT.
		FailAtCommit: `CREATE TABLE %[1]s (n VARCHAR(64) NOT NULL UNIQUE DEFERRABLE INITIALLY DEFERRED);
INSERT INTO %[1]s (n) VALUES ('bad')`,
	})
}
