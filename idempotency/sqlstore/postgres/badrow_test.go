package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency/sqlstore"
)

// A row the store cannot read (another program's state) makes the claim
// fail with an error that says what is wrong with it.
func TestBadRow(t *testing.T) {
	s, table := openStore(t)
	if _, err := s.DB().ExecContext(t.Context(), "INSERT INTO "+table+" VALUES ('m-1', 'DONE', 'someone', now(), now() + interval '1 hour')"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Claim(t.Context(), "m-1", "me", time.Minute)
	if !errors.Is(err, sqlstore.ErrBadRow) || !strings.Contains(err.Error(), `state "DONE" is neither CLAIMED nor CONFIRMED`) {
		t.Errorf("Claim of a row in state DONE = %v; want ErrBadRow saying so", err)
	}
}
