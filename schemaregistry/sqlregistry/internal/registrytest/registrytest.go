// Package registrytest holds the tests every database of package
// sqlregistry passes: sqlregistry/sqlite and sqlregistry/postgres run them
// on their own database.
package registrytest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acemq-go/acemq/schemaregistry"
	"github.com/acemq-go/acemq/schemaregistry/sqlregistry"
)

// Target is a database to test on.
type Target struct {
	Dialect sqlregistry.Dialect
	// Database makes a database for t, or a place in a shared one, and
	// returns how to open a handle on it (a pool of its own each time, as
	// another process would have; closed when t ends) and the table t uses.
	Database func(t *testing.T) (open func() *sql.DB, table string)
}

// Run runs every test on target.
func Run(t *testing.T, target Target) {
	tests := []struct {
		name string
		fn   func(*testing.T, Target)
	}{
		{"IDsFromOne", idsFromOne},
		{"UnknownID", unknownID},
		{"KnownDefinitionSpendsNoID", knownDefinitionSpendsNoID},
		{"ConcurrentRegistration", concurrentRegistration},
		{"MigrateIdempotent", migrateIdempotent},
		{"Reopen", reopen},
		{"ContextRespected", contextRespected},
		{"NotARegistryTable", notARegistryTable},
		{"WithoutMigrate", withoutMigrate},
		{"IDOutOfRange", idOutOfRange},
		{"IDRangeConstraint", idRangeConstraint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, target) })
	}
}

func registry(t *testing.T, target Target, db *sql.DB, table string) *sqlregistry.Registry {
	t.Helper()
	r, err := sqlregistry.New(db, target.Dialect, sqlregistry.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func migrated(t *testing.T, target Target, db *sql.DB, table string) *sqlregistry.Registry {
	t.Helper()
	r := registry(t, target, db, table)
	if err := r.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return r
}

func register(t *testing.T, r *sqlregistry.Registry, def string) uint32 {
	t.Helper()
	id, err := r.Register(t.Context(), def)
	if err != nil {
		t.Fatalf("Register(%s): %v", def, err)
	}
	return id
}

func schema(t *testing.T, r *sqlregistry.Registry, id uint32) string {
	t.Helper()
	def, err := r.Schema(t.Context(), id)
	if err != nil {
		t.Fatalf("Schema(%d): %v", id, err)
	}
	return def
}

func def(n int) string {
	return fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"f","type":"string"}]}`, n)
}

func rows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Ids from 1 in the order of registration, the same one for a definition
// registered again, and each id's definition back as it was registered.
func idsFromOne(t *testing.T, target Target) {
	open, table := target.Database(t)
	r := migrated(t, target, open(), table)
	a, b := def(1), `{"type": "long"}`
	if id := register(t, r, a); id != 1 {
		t.Errorf("first Register = %d, want 1", id)
	}
	if id := register(t, r, b); id != 2 {
		t.Errorf("second Register = %d, want 2", id)
	}
	if id := register(t, r, a); id != 1 {
		t.Errorf("Register of the first again = %d, want 1", id)
	}
	// A fresh registry (nothing remembered) reads them from the table.
	fresh := registry(t, target, open(), table)
	if got := schema(t, fresh, 2); got != b {
		t.Errorf("Schema(2) = %q, want %q", got, b)
	}
	if id := register(t, fresh, a); id != 1 {
		t.Errorf("Register of the first through another registry = %d, want 1", id)
	}
	// Another text of the same schema is another definition: the
	// fingerprint is of the text.
	if id := register(t, fresh, `{"type":"long"}`); id != 3 {
		t.Errorf("Register of a respelled definition = %d, want 3", id)
	}
}

func unknownID(t *testing.T, target Target) {
	open, table := target.Database(t)
	r := migrated(t, target, open(), table)
	register(t, r, def(1))
	for _, id := range []uint32{0, 2, 4294967295} {
		_, err := r.Schema(t.Context(), id)
		if !errors.Is(err, schemaregistry.ErrUnknownSchema) {
			t.Errorf("Schema(%d) = %v, want ErrUnknownSchema", id, err)
			continue
		}
		if want := fmt.Sprintf("unknown schema id %d in table %s", id, table); !strings.Contains(err.Error(), want) {
			t.Errorf("Schema(%d) = %q; want it to say %q", id, err, want)
		}
	}
}

// Registering a known definition again, from a registry that has not seen
// it, takes no id from the sequence: the next new one gets the next id.
func knownDefinitionSpendsNoID(t *testing.T, target Target) {
	open, table := target.Database(t)
	register(t, migrated(t, target, open(), table), def(1))
	for range 3 {
		if id := register(t, registry(t, target, open(), table), def(1)); id != 1 {
			t.Fatalf("Register again = %d, want 1", id)
		}
	}
	if id := register(t, registry(t, target, open(), table), def(2)); id != 2 {
		t.Errorf("Register of a new definition after three of a known one = %d, want 2", id)
	}
}

// Several "processes" (each its own pool and registry), each with several
// goroutines, register the same new definitions at once: each definition
// gets one id, which every one of them is given, and one row.
func concurrentRegistration(t *testing.T, target Target) {
	const processes, goroutines, defs = 4, 4, 5
	open, table := target.Database(t)
	migrated(t, target, open(), table)
	regs := make([]*sqlregistry.Registry, processes)
	for p := range regs {
		regs[p] = registry(t, target, open(), table)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]map[uint32]int{} // definition -> id -> how many were given it
	var errs []error
	for p := range processes {
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range defs {
					n := (i + p + g) % defs // each goroutine in another order
					id, err := regs[p].Register(context.Background(), def(n))
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						if got[n] == nil {
							got[n] = map[uint32]int{}
						}
						got[n][id]++
					}
					mu.Unlock()
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d registrations failed, the first: %v", len(errs), errs[0])
	}
	owner := map[uint32]int{}
	for n := range defs {
		if len(got[n]) != 1 {
			t.Errorf("definition %d was given ids %v, want one", n, got[n])
		}
		for id := range got[n] {
			if id == 0 {
				t.Errorf("definition %d was given id 0", n)
			}
			if o, ok := owner[id]; ok {
				t.Errorf("id %d was given to definitions %d and %d", id, o, n)
			}
			owner[id] = n
			if d := schema(t, registry(t, target, open(), table), id); d != def(n) {
				t.Errorf("Schema(%d) = %q, want definition %d", id, d, n)
			}
		}
	}
	if n := rows(t, open(), table); n != defs {
		t.Errorf("%d rows in %s, want %d", n, table, defs)
	}
}

// Migrate again, and from several processes at once, changes nothing and
// fails nowhere.
func migrateIdempotent(t *testing.T, target Target) {
	open, table := target.Database(t)
	r := migrated(t, target, open(), table)
	register(t, r, def(1))
	if err := r.Migrate(t.Context()); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	fresh := table + "_2" // a table not made yet, made by four at once
	t.Cleanup(func() { _, _ = open().ExecContext(context.Background(), "DROP TABLE IF EXISTS "+fresh) })
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		reg := registry(t, target, open(), fresh)
		wg.Go(func() { errs[i] = reg.Migrate(context.Background()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent Migrate %d: %v", i, err)
		}
	}
	if id := register(t, registry(t, target, open(), table), def(2)); id != 2 {
		t.Errorf("Register after Migrate again = %d, want 2: the table was kept", id)
	}
	if id := register(t, registry(t, target, open(), fresh), def(2)); id != 1 {
		t.Errorf("Register in the concurrently made table = %d, want 1", id)
	}
}

// What one process registered is there for the next, on a new connection.
func reopen(t *testing.T, target Target) {
	open, table := target.Database(t)
	db := open()
	r := migrated(t, target, db, table)
	a, b := register(t, r, def(1)), register(t, r, def(2))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again := migrated(t, target, open(), table)
	if got := schema(t, again, b); got != def(2) {
		t.Errorf("after reopening, Schema(%d) = %q, want %q", b, got, def(2))
	}
	if id := register(t, again, def(1)); id != a {
		t.Errorf("after reopening, Register = %d, want %d", id, a)
	}
	if id := register(t, again, def(3)); id != 3 {
		t.Errorf("after reopening, a new definition got %d, want 3", id)
	}
}

func contextRespected(t *testing.T, target Target) {
	open, table := target.Database(t)
	r := migrated(t, target, open(), table)
	register(t, r, def(1))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Register(ctx, def(2)); !errors.Is(err, context.Canceled) {
		t.Errorf("Register under a cancelled context = %v, want context.Canceled", err)
	}
	fresh := registry(t, target, open(), table)
	if _, err := fresh.Schema(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Schema under a cancelled context = %v, want context.Canceled", err)
	}
	if err := fresh.Migrate(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Migrate under a cancelled context = %v, want context.Canceled", err)
	}
	// Nothing was registered by the cancelled call.
	if id := register(t, r, def(3)); id != 2 {
		t.Errorf("Register after the cancelled one = %d, want 2", id)
	}
}

// A table of that name with other columns (another library's, say) is
// refused by name, not written into.
func notARegistryTable(t *testing.T, target Target) {
	open, table := target.Database(t)
	db := open()
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, schema_text TEXT)"); err != nil {
		t.Fatal(err)
	}
	err := registry(t, target, db, table).Migrate(t.Context())
	if !errors.Is(err, sqlregistry.ErrNotRegistryTable) {
		t.Fatalf("Migrate over another table = %v, want ErrNotRegistryTable", err)
	}
	if !strings.Contains(err.Error(), table) || !strings.Contains(err.Error(), "fingerprint, definition, registered_at") {
		t.Errorf("Migrate's error %q does not name the table and the missing columns", err)
	}
}

func withoutMigrate(t *testing.T, target Target) {
	open, table := target.Database(t)
	r := registry(t, target, open(), table)
	_, err := r.Register(t.Context(), def(1))
	if err == nil || !strings.Contains(err.Error(), "register in table "+table) {
		t.Errorf("Register without the table = %v; want an error naming it", err)
	}
	if _, err := r.Schema(t.Context(), 1); err == nil || errors.Is(err, schemaregistry.ErrUnknownSchema) {
		t.Errorf("Schema without the table = %v; want the database's error, not an unknown id", err)
	}
}

// An id that the four bytes of the framing cannot carry, in a table made
// without the range check, is refused rather than cut short.
func idOutOfRange(t *testing.T, target Target) {
	open, table := target.Database(t)
	db := open()
	ctx := t.Context()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+
		" (id BIGINT PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, definition TEXT NOT NULL, registered_at TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" VALUES (4294967296, '"+
		schemaregistry.Fingerprint(def(1))+"', 'x', '2025-01-01T00:00:00Z')"); err != nil {
		t.Fatal(err)
	}
	r := migrated(t, target, db, table)
	_, err := r.Register(ctx, def(1))
	if err == nil || !strings.Contains(err.Error(), "gave id 4294967296, outside 1..4294967295") {
		t.Errorf("Register of a definition whose id is 2^32 = %v; want the range named", err)
	}
}

// The table Migrate makes refuses ids outside 1..2^32-1 itself.
func idRangeConstraint(t *testing.T, target Target) {
	open, table := target.Database(t)
	db := open()
	migrated(t, target, db, table)
	for _, id := range []int64{0, 4294967296} {
		_, err := db.ExecContext(t.Context(), fmt.Sprintf("INSERT INTO %s (id, fingerprint, definition) VALUES (%d, 'f%d', 'x')", table, id, id))
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "check constraint") {
			t.Errorf("inserting id %d = %v; want the table's check to refuse it", id, err)
		}
	}
}
