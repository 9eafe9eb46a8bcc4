package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/internal/storetest"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
)

// The store's contract on the test server, each test in a table of its
// own, each store a pool of its own.
func TestStore(t *testing.T) {
	url := dbtest.PostgresURL(t)
	storetest.Run(t, storetest.Target{
		New: func(t *testing.T, clock func() time.Time) func() idempotency.Store {
			table := dbtest.UniqueName(t, "acemq_idempotency")
			dbtest.DropWhenDone(t, url, table)
			return func() idempotency.Store {
				s, err := postgres.Open(t.Context(), url, sqlstore.WithTable(table), sqlstore.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		},
	})
}

// The table is the family's: its column types, timestamps with time zone,
// its index.
func TestTableShape(t *testing.T) {
	s, table := openStore(t)
	got := dbtest.Columns(t, s.DB(), table)
	want := []string{
		"message_id character varying 255 NO",
		"state character varying 16 NO",
		"claimed_by character varying 64 YES",
		"recorded_at timestamp with time zone 0 NO",
		"expires_at timestamp with time zone 0 NO",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var def string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT indexdef FROM pg_indexes WHERE indexname = $1", table+"_expiry").Scan(&def); err != nil {
		t.Fatalf("the expiry index: %v", err)
	}
	if !strings.HasSuffix(def, "(expires_at)") {
		t.Errorf("the expiry index is %s", def)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Errorf("Migrate again: %v", err)
	}
}

// A URL that does not parse is refused without repeating it.
func TestOpenDBKeepsThePasswordOut(t *testing.T) {
	_, err := postgres.OpenDB("postgres://acemq:s3cret@localhost:notaport/acemq")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("OpenDB of a bad URL = %v; want an error without the password", err)
	}
}

// openStore opens a store on the test server, on a table of its own,
// dropped (and the store closed) when the test ends.
func openStore(t *testing.T) (*sqlstore.Store, string) {
	url := dbtest.PostgresURL(t)
	table := dbtest.UniqueName(t, "acemq_idempotency")
	dbtest.DropWhenDone(t, url, table)
	s, err := postgres.Open(t.Context(), url, sqlstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, table
}
