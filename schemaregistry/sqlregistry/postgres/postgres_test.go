package postgres_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/internal/testing/dbtest"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/internal/registrytest"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/postgres"
)

// Every registry test on the test server, each in a table of its own,
// dropped when it ends.
func TestRegistry(t *testing.T) {
	url := dbtest.PostgresURL(t)
	registrytest.Run(t, registrytest.Target{
		Dialect: sqlregistry.PostgreSQL,
		Database: func(t *testing.T) (func() *sql.DB, string) {
			table := dbtest.UniqueName(t, "acemq_schema_registry")
			open := func() *sql.DB {
				db, err := postgres.OpenDB(url)
				if err != nil {
					t.Fatal(err)
				}
				return db
			}
			dbtest.DropWhenDone(t, url, table)
			return func() *sql.DB {
				db := open()
				t.Cleanup(func() { db.Close() })
				return db
			}, table
		},
	})
}

func TestOpen(t *testing.T) {
	url := dbtest.PostgresURL(t)
	table := dbtest.UniqueName(t, "acemq_schema_registry")
	r, err := postgres.Open(t.Context(), url, sqlregistry.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	dbtest.DropWhenDone(t, url, table)
	if id, err := r.Register(t.Context(), `{"type":"string"}`); err != nil || id != 1 {
		t.Errorf("Register = %d, %v; want 1", id, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.DB().Ping(); err == nil {
		t.Error("the pool is still open after Close")
	}
}

// A URL that does not parse is refused without repeating it: it may hold a
// password.
func TestOpenDBKeepsThePasswordOut(t *testing.T) {
	_, err := postgres.OpenDB("postgres://acemq:s3cret@localhost:notaport/acemq")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("OpenDB of a bad URL = %v; want an error without the password", err)
	}
}
