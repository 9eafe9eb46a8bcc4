package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/internal/storetest"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
)

// The store's contract on a database file of its own, each store opening
// a pool of its own on it.
func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Target{
		New: func(t *testing.T, clock func() time.Time) func() idempotency.Store {
			path := filepath.Join(t.TempDir(), "idempotency.db")
			return func() idempotency.Store {
				s, err := sqlite.Open(t.Context(), path, sqlstore.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		},
	})
}

// The table is the family's: its columns, its index, the times as text
// that sorts as they do.
func TestTableShape(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "i.db"), sqlstore.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Table() != "acemq_idempotency" {
		t.Errorf("default table %q", s.Table())
	}
	if _, err := s.Claim(t.Context(), "m-1", "me", 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	var state, owner, recorded, expires string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT state, claimed_by, recorded_at, expires_at FROM acemq_idempotency WHERE message_id = 'm-1'").
		Scan(&state, &owner, &recorded, &expires); err != nil {
		t.Fatal(err)
	}
	if state != "CLAIMED" || owner != "me" || recorded != "2025-03-01T12:00:00.000Z" || expires != "2025-03-01T12:05:00.000Z" {
		t.Errorf("row: %s %s %s %s", state, owner, recorded, expires)
	}
	var index string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'acemq_idempotency_expiry'").Scan(&index); err != nil {
		t.Fatalf("the expiry index: %v", err)
	}
	// Migrate again is a no-op; a table of that name without the columns is refused.
	if err := s.Migrate(t.Context()); err != nil {
		t.Errorf("Migrate again: %v", err)
	}
	if _, err := s.DB().ExecContext(t.Context(), "CREATE TABLE other (id INTEGER)"); err != nil {
		t.Fatal(err)
	}
	other, err := sqlstore.New(s.DB(), sqlstore.SQLite, sqlstore.WithTable("other"))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Migrate(t.Context()); !errors.Is(err, sqlstore.ErrNotIdempotencyTable) {
		t.Errorf("Migrate of another table = %v; want ErrNotIdempotencyTable", err)
	}
}

func TestNewRefuses(t *testing.T) {
	db, err := sqlite.OpenDB(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := sqlstore.New(nil, sqlstore.SQLite); err == nil {
		t.Error("New took no database")
	}
	if _, err := sqlstore.New(db, sqlstore.Dialect{}); err == nil {
		t.Error("New took no dialect")
	}
	for _, name := range []string{"", "1x", "x; DROP TABLE y", `"x"`, "s.x", "x-2", "x234567890123456789012345678901234567890123456789012345678"} {
		if _, err := sqlstore.New(db, sqlstore.SQLite, sqlstore.WithTable(name)); err == nil {
			t.Errorf("New took the table name %q", name)
		} else if want := fmt.Sprintf("idempotency: New: WithTable(%q): ", name); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("New with the table name %q: %v, want the error of the option, %s...", name, err, want)
		}
	}
	if _, err := sqlite.Open(t.Context(), ""); err == nil {
		t.Error("Open(\"\") opened something")
	}
}
