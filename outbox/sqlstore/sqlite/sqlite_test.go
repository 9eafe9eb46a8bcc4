package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/internal/storetest"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
)

// The store's contract on a database file of its own, each store opening
// a pool of its own on it.
func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Target{
		New: func(t *testing.T, clock func() time.Time) func() *sqlstore.Store {
			path := filepath.Join(t.TempDir(), "outbox.db")
			return func() *sqlstore.Store {
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

// The table is Ruby's: its columns, its index, the times as text that
// sorts as they do.
func TestTableShape(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "o.db"), sqlstore.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Table() != "acemq_outbox" {
		t.Errorf("default table %q", s.Table())
	}
	id, err := s.Write(t.Context(), s.DB(), outbox.Message{Exchange: "x", RoutingKey: "k", Body: []byte{0xff}})
	if err != nil {
		t.Fatal(err)
	}
	var body, enc, ctype, created string
	var attempts int
	if err := s.DB().QueryRowContext(t.Context(), "SELECT body, body_encoding, content_type, created_at, attempts FROM acemq_outbox WHERE id = ?", id).
		Scan(&body, &enc, &ctype, &created, &attempts); err != nil {
		t.Fatal(err)
	}
	if body != "/w==" || enc != "base64" || ctype != "application/octet-stream" || created != "2025-03-01T12:00:00.000Z" || attempts != 0 {
		t.Errorf("row: %s %s %s %s %d", body, enc, ctype, created, attempts)
	}
	var index string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'acemq_outbox_pending'").Scan(&index); err != nil {
		t.Fatalf("the pending index: %v", err)
	}
	// This library's own: a claim in id order reads no published record.
	if err := s.DB().QueryRowContext(t.Context(), "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'acemq_outbox_unsent'").Scan(&index); err != nil {
		t.Fatalf("the unsent index: %v", err)
	}
	if !strings.HasSuffix(index, "(id) WHERE published_at IS NULL") {
		t.Errorf("the unsent index is %s", index)
	}
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
	if err := other.Migrate(t.Context()); !errors.Is(err, sqlstore.ErrNotOutboxTable) {
		t.Errorf("Migrate of another table = %v; want ErrNotOutboxTable", err)
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
	for _, name := range []string{"", "1x", "x; DROP TABLE y", `"x"`, "s.x", "x-2", "x2345678901234567890123456789012345678901234567890123456"} {
		if _, err := sqlstore.New(db, sqlstore.SQLite, sqlstore.WithTable(name)); err == nil {
			t.Errorf("New took the table name %q", name)
		} else if want := fmt.Sprintf("outbox: New: WithTable(%q): ", name); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("New with the table name %q: %v, want the error of the option, %s...", name, err, want)
		}
	}
	if _, err := sqlite.Open(t.Context(), ""); err == nil {
		t.Error("Open(\"\") opened something")
	}
}
