package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/schemaregistry"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/internal/registrytest"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry/sqlite"
)

// Every registry test on a database file of its own, in the default table.
func TestRegistry(t *testing.T) {
	registrytest.Run(t, registrytest.Target{
		Dialect: sqlregistry.SQLite,
		Database: func(t *testing.T) (func() *sql.DB, string) {
			path := filepath.Join(t.TempDir(), "registry.db")
			return func() *sql.DB {
				db, err := sqlite.OpenDB(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}, contract.DefaultSchemaRegistryTable
		},
	})
}

// Open makes the table, its registry owns the database, and what it
// registered is there when the file is opened again.
func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	r, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Table() != "acemq_schema_registry" {
		t.Errorf("default table %q", r.Table())
	}
	id, err := r.Register(t.Context(), `{"type":"string"}`)
	if err != nil || id != 1 {
		t.Fatalf("Register = %d, %v; want 1", id, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.DB().Ping(); err == nil {
		t.Error("the database is still open after Close")
	}
	again, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if def, err := again.Schema(t.Context(), 1); err != nil || def != `{"type":"string"}` {
		t.Errorf("Schema(1) after reopening = %q, %v", def, err)
	}
}

// An in-memory database is one per connection in SQLite: Open holds the
// pool to one, so that registries sharing it, from many goroutines, see
// one database.
func TestOpenMemory(t *testing.T) {
	r, err := sqlite.Open(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	ids := make([]uint32, 8)
	errs := make([]error, len(ids))
	for i := range ids {
		// Registries of their own, so that none answers from what it remembers.
		reg, err := sqlregistry.New(r.DB(), sqlregistry.SQLite)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { ids[i], errs[i] = reg.Register(t.Context(), `{"type":"int"}`) })
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != 1 {
			t.Errorf("goroutine %d: Register = %d, %v; want 1", i, ids[i], errs[i])
		}
	}
	other, _ := sqlregistry.New(r.DB(), sqlregistry.SQLite)
	if def, err := other.Schema(t.Context(), 1); err != nil || def != `{"type":"int"}` {
		t.Errorf("Schema(1) through another registry = %q, %v", def, err)
	}
	if _, err := other.Schema(t.Context(), 2); !errors.Is(err, schemaregistry.ErrUnknownSchema) {
		t.Errorf("Schema(2) = %v, want ErrUnknownSchema", err)
	}
}

func TestOpenRefusesEmptyPath(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), ""); err == nil {
		t.Error("Open(\"\") opened something")
	}
}

// New refuses what it cannot build a registry of, before any SQL is sent:
// a table name is spliced into the statements, so only plain identifiers
// pass.
func TestNewRefuses(t *testing.T) {
	db, err := sqlite.OpenDB(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := sqlregistry.New(nil, sqlregistry.SQLite); err == nil {
		t.Error("New took no database")
	}
	if _, err := sqlregistry.New(db, sqlregistry.Dialect{}); err == nil {
		t.Error("New took no dialect")
	}
	for _, name := range []string{"", "1schemas", "schemas; DROP TABLE x", `"schemas"`, "a.b.c", "schemas-2"} {
		if _, err := sqlregistry.New(db, sqlregistry.SQLite, sqlregistry.WithTable(name)); err == nil {
			t.Errorf("New took the table name %q", name)
		} else if want := fmt.Sprintf("schema registry: New: WithTable(%q): ", name); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("New with the table name %q: %v, want the error of the option, %s...", name, err, want)
		}
	}
	for _, name := range []string{"schemas", "_s2", "main.acemq_schemas"} {
		r, err := sqlregistry.New(db, sqlregistry.SQLite, sqlregistry.WithTable(name))
		if err != nil || r.Table() != name {
			t.Errorf("New with the table name %q: %v", name, err)
		}
	}
}
