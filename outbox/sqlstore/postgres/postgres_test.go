package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acemq-go/acemq/internal/testing/dbtest"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/internal/storetest"
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
)

// The store's contract on the test server, each test in a table of its
// own, each store a pool of its own.
func TestStore(t *testing.T) {
	url := dbtest.PostgresURL(t)
	storetest.Run(t, storetest.Target{
		New: func(t *testing.T, clock func() time.Time) func() *sqlstore.Store {
			table := dbtest.UniqueName(t, "acemq_outbox")
			dbtest.DropWhenDone(t, url, table)
			return func() *sqlstore.Store {
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

// The table is Ruby's columns, with PostgreSQL's types, and its index.
func TestTableShape(t *testing.T) {
	url := dbtest.PostgresURL(t)
	table := dbtest.UniqueName(t, "acemq_outbox")
	dbtest.DropWhenDone(t, url, table)
	s, err := postgres.Open(t.Context(), url, sqlstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := dbtest.Columns(t, s.DB(), table)
	want := []string{
		"id bigint 0 NO",
		"exchange_name character varying 255 NO",
		"routing_key character varying 255 NO",
		"body text 0 NO",
		"body_encoding character varying 16 NO",
		"content_type character varying 255 YES",
		"headers text 0 YES",
		"created_at timestamp with time zone 0 NO",
		"published_at timestamp with time zone 0 YES",
		"attempts integer 0 NO",
		"last_error character varying 1000 YES",
		"locked_by character varying 255 YES",
		"locked_until timestamp with time zone 0 YES",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var def string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT indexdef FROM pg_indexes WHERE indexname = $1", table+"_pending").Scan(&def); err != nil {
		t.Fatalf("the pending index: %v", err)
	}
	if !strings.HasSuffix(def, "(published_at, created_at)") {
		t.Errorf("the pending index is %s", def)
	}
	// This library's own: a claim in id order reads no published record.
	if err := s.DB().QueryRowContext(t.Context(), "SELECT indexdef FROM pg_indexes WHERE indexname = $1", table+"_unsent").Scan(&def); err != nil {
		t.Fatalf("the unsent index: %v", err)
	}
	if !strings.HasSuffix(def, "(id) WHERE (published_at IS NULL)") {
		t.Errorf("the unsent index is %s", def)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Errorf("Migrate again: %v", err)
	}
}

// A record written in a pgx transaction is offered once it commits, and
// never when it rolls back.
func TestWriteInAPgxTransaction(t *testing.T) {
	url := dbtest.PostgresURL(t)
	table := dbtest.UniqueName(t, "acemq_outbox")
	dbtest.DropWhenDone(t, url, table)
	s, err := postgres.Open(t.Context(), url, sqlstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	write := func(body string, commit bool) int64 {
		tx, err := conn.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		id, err := postgres.Write(t.Context(), tx, s, outbox.Message{Exchange: "orders", RoutingKey: "order.new", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit(t.Context())
		} else {
			err = tx.Rollback(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	write("rolled back", false)
	id := write("committed", true)
	recs, err := s.Claim(t.Context(), outbox.Claim{Owner: "a", Limit: 10, Lease: time.Minute, MaxAttempts: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].ID != id || string(recs[0].Message.Body) != "committed" || recs[0].Err != nil {
		t.Fatalf("claimed %+v; want only record %d", recs, id)
	}
	if _, err := postgres.Write(t.Context(), nil, s, outbox.Message{}); err == nil {
		t.Error("Write took no transaction")
	}
}

// A URL that does not parse is refused without repeating it.
func TestOpenDBKeepsThePasswordOut(t *testing.T) {
	_, err := postgres.OpenDB("postgres://acemq:s3cret@localhost:notaport/acemq")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("OpenDB of a bad URL = %v; want an error without the password", err)
	}
}
