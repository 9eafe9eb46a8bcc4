package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/internal/txtest"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
)

// TxHandler on a database file of the test's own. Foreign keys are on, so
// that a deferred one can make a COMMIT fail.
func TestTxHandler(t *testing.T) {
	txtest.Run(t, txtest.Target{
		Open: func(t *testing.T, clock func() time.Time) func() *sqlstore.Store {
			dsn := "file:" + filepath.Join(t.TempDir(), "idempotency.db") + "?_pragma=foreign_keys(1)"
			return func() *sqlstore.Store {
				s, err := sqlite.Open(t.Context(), dsn, sqlstore.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		},
		Work:  func(t *testing.T) string { return dbtest.UniqueName(t, "work") },
		Param: "?",
		FailAtCommit: `CREATE TABLE %[1]s_parent (id INTEGER PRIMARY KEY);
CREATE TABLE %[1]s (n VARCHAR(64) NOT NULL, parent INTEGER DEFAULT 42 REFERENCES %[1]s_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
	})
}
