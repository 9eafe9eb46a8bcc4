package sqlite_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
)

// A row the store cannot read (another program's, or damaged) makes the
// claim fail with an error that says what is wrong with it.
func TestBadRow(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	later := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	for _, c := range []struct{ key, state, expires, want string }{
		{"bad-state", "DONE", later, `state "DONE" is neither CLAIMED nor CONFIRMED`},
		{"bad-time", "CLAIMED", "tomorrow", `expires_at: "tomorrow" is not a time in the layout`},
		{"bad-layout", "CONFIRMED", "9999-01-01 00:00:00", `expires_at: "9999-01-01 00:00:00" is not a time in the layout`},
	} {
		if _, err := s.DB().ExecContext(t.Context(), "INSERT INTO acemq_idempotency VALUES (?, ?, 'someone', ?, ?)", c.key, c.state, later, c.expires); err != nil {
			t.Fatal(err)
		}
		_, err := s.Claim(t.Context(), c.key, "me", time.Minute)
		if !errors.Is(err, sqlstore.ErrBadRow) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.key) {
			t.Errorf("Claim of the row %s = %v; want ErrBadRow saying %s", c.key, err, c.want)
		}
	}
}
