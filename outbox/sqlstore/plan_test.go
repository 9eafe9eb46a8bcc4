package sqlstore_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/postgres"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
)

// backlog is how many records wait in the plan tests' table: many more
// than a batch, so that a plan reading them all shows.
const backlog = 2000

// withBacklog writes backlog records to s in one transaction, as a burst
// of business transactions would, and claims a batch of them: the ids a
// relay marks next.
func withBacklog(t *testing.T, s *sqlstore.Store) []int64 {
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for range backlog {
		if _, err := s.Write(t.Context(), tx, outbox.Message{RoutingKey: "q", Body: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Claim(t.Context(), outbox.Claim{Owner: "a", Limit: outbox.DefaultBatchSize, Lease: time.Minute, MaxAttempts: 10})
	if err != nil || len(recs) != outbox.DefaultBatchSize {
		t.Fatalf("claimed %d records, %v; want %d", len(recs), err, outbox.DefaultBatchSize)
	}
	ids := make([]int64, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return ids
}

// Marking a batch reads only its records, however many others wait. On a
// table whose statistics do not know of the backlog (a new table, or one
// last analyzed when little was pending) PostgreSQL served the mark's
// "published_at IS NULL" with the pending index: a read of every
// unpublished record a batch, five times raw's mark in the benchmark.
func TestMarkReadsOnlyItsRecordsOnPostgreSQL(t *testing.T) {
	url := dbtest.PostgresURL(t)
	table := dbtest.UniqueName(t, "acemq_outbox")
	dbtest.DropWhenDone(t, url, table)
	s, err := postgres.Open(t.Context(), url, sqlstore.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := withBacklog(t, s)
	query, args := s.MarkStatement(ids)
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() // EXPLAIN ANALYZE runs the update: undone
	var text string
	if err := tx.QueryRowContext(t.Context(), "EXPLAIN (ANALYZE, FORMAT JSON) "+query, args...).Scan(&text); err != nil {
		t.Fatal(err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(text), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN said %s (%v)", text, err)
	}
	if read := plans[0].Plan.mostRowsRead(); read > len(ids) {
		t.Errorf("marking %d of %d records read %d rows in one step of its plan; want at most %d:\n%s", len(ids), backlog, read, len(ids), text)
	}
}

// planNode is a step of PostgreSQL's EXPLAIN (FORMAT JSON).
type planNode struct {
	Type     string     `json:"Node Type"`
	Rows     int        `json:"Actual Rows"`
	Filtered int        `json:"Rows Removed by Filter"`
	Rechecks int        `json:"Rows Removed by Index Recheck"`
	Plans    []planNode `json:"Plans"`
}

// mostRowsRead is the most rows a step of the plan read.
func (n planNode) mostRowsRead() int {
	most := n.Rows + n.Filtered + n.Rechecks
	for _, p := range n.Plans {
		most = max(most, p.mostRowsRead())
	}
	return most
}

// On SQLite the mark looks its records up by id.
func TestMarkReadsOnlyItsRecordsOnSQLite(t *testing.T) {
	s := openSQLite(t)
	query, args := s.MarkStatement(withBacklog(t, s))
	if plan := sqlitePlan(t, s, query, args); len(plan) != 1 || !strings.Contains(plan[0], "INTEGER PRIMARY KEY") {
		t.Errorf("the mark's plan is %q; want one search by id", plan)
	}
}

// On SQLite a claim walks the unsent index in id order and stops at its
// limit. SQLite's planner chose the pending index (published_at IS NULL)
// and sorted: a read of every unpublished record a claim.
func TestClaimReadsInIDOrderOnSQLite(t *testing.T) {
	s := openSQLite(t)
	withBacklog(t, s)
	query, args := s.ClaimStatement("b", outbox.DefaultBatchSize)
	plan := strings.Join(sqlitePlan(t, s, query, args), "; ")
	if !strings.Contains(plan, "SCAN "+s.Table()+" USING INDEX "+s.Table()+contract.OutboxUnsentSuffix) || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("the claim's plan is %q; want a scan of the unsent index, no sort", plan)
	}
}

func openSQLite(t *testing.T) *sqlstore.Store {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sqlitePlan is SQLite's EXPLAIN QUERY PLAN of query, a step a line.
func sqlitePlan(t *testing.T, s *sqlstore.Store, query string, args []any) []string {
	rows, err := s.DB().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}
