package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
)

// A row the store cannot read (another program's state) makes the claim
// fail with an error that says what is wrong with it.
func TestBadRow(t *testing.T) {
	url := dbtest.PostgresURL(t)
	table := dbtest.UniqueName(t, "acemq_idempotency")
	dbtest.DropWhenDone(t, url, table)
	s, err := postgres.Open(t.Context(), url, sqlstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.DB().ExecContext(t.Context(), "INSERT INTO "+table+" VALUES ('m-1', 'DONE', 'someone', now(), now() + interval '1 hour')"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Claim(t.Context(), "m-1", "me", time.Minute)
	if !errors.Is(err, sqlstore.ErrBadRow) || !strings.Contains(err.Error(), `state "DONE" is neither CLAIMED nor CONFIRMED`) {
		t.Errorf("Claim of a row in state DONE = %v; want ErrBadRow saying so", err)
	}
}
