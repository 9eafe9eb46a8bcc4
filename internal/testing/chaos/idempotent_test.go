package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency/sqlstore/postgres"
	"github.com/acemq-go/acemq/idempotency/sqlstore/sqlite"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
)

// idemRate is the idempotent runs' rate (messages a second): SQLite
// writes a claim and a confirm per message, each a transaction synced to
// the disk, and on the 2-core test machine the consumer fell behind 300/s
// (with every close's redeliveries) until a close's recovery took longer
// than the harness waits.
const idemRate = 150

// idemClaimTimeout is the chaos consumer's claim timeout: long beside a
// handler's run (milliseconds), short enough that a killed process's claims
// expire within the run. It was 3 s, until two checkouts testing at once
// (load average 20 to 37 on 2 cores) held a run from its claim to its
// confirm for longer, and another process took the message over as
// documented; the report names such a run (ClaimExpired).
const idemClaimTimeout = 10 * time.Second

// TestChaosIdempotentShort runs the idempotent consumer briefly in the
// normal `make test`: 2 kills on SQLite and on PostgreSQL, with each
// handler (the two at once). It fails on any lost message, on work done
// twice that a kill between the work and the confirm does not explain, and
// on any work of the same-transaction handler done twice.
func TestChaosIdempotentShort(t *testing.T) {
	brokertest.URL(t)
	bin := buildConsumer(t)
	for _, db := range []string{"SQLite", "PostgreSQL"} {
		t.Run(db, func(t *testing.T) {
			for _, mode := range []struct {
				name   string
				sameTx bool
			}{{"handler", false}, {"tx", true}} {
				t.Run(mode.name, func(t *testing.T) {
					t.Parallel()
					runIdempotent(t, bin, db, mode.sameTx, Kill, 2, time.Second, 45*time.Second)
				})
			}
		})
	}
}

// idemStore is a store for the consumer processes of one run: its
// --store argument, its table, and the work table (sameTx) made empty.
type idemStore struct {
	arg, table, work string
	db               *sql.DB
	param            string
}

func newIdemStore(t *testing.T, db string, sameTx bool) *idemStore {
	s := &idemStore{table: "acemq_idempotency"}
	var err error
	switch db {
	case "SQLite":
		path := filepath.Join(t.TempDir(), "idempotency.db")
		s.arg, s.param = "sqlite:"+path, "?"
		s.db, err = sqlite.OpenDB(path)
	default:
		url := dbtest.PostgresURL(t)
		s.arg, s.param = url, "$1"
		s.table = dbtest.UniqueName(t, "acemq_idem")
		s.db, err = postgres.OpenDB(url)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.db.Close() })
	if sameTx {
		s.work = dbtest.UniqueName(t, "chaos_work")
		if _, err := s.db.ExecContext(t.Context(), "CREATE TABLE "+s.work+" (n INTEGER NOT NULL, pid INTEGER NOT NULL)"); err != nil {
			t.Fatal(err)
		}
	}
	if db == "PostgreSQL" {
		t.Cleanup(func() {
			for _, table := range []string{s.table, s.work} {
				if table == "" {
					continue
				}
				if _, err := s.db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table); err != nil {
					t.Errorf("dropping %s: %v", table, err)
				}
			}
		})
	}
	return s
}

// rows counts the work table's rows by number.
func (s *idemStore) rows(t *testing.T) map[int]int {
	out := map[int]int{}
	rows, err := s.db.QueryContext(context.Background(), "SELECT n, COUNT(*) FROM "+s.work+" GROUP BY n")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, c int
		if err := rows.Scan(&n, &c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// runIdempotent runs scenario with the idempotent consumer on db, prints
// both reports, and fails t on a loss or on work done twice unexplained.
func runIdempotent(t *testing.T, bin, db string, sameTx bool, scenario string, faults int, gap, quiet time.Duration) IdempotentReport {
	store := newIdemStore(t, db, sameTx)
	name := brokertest.UniqueName(t, "acemq.chaos")
	dir := t.TempDir()
	rep := runConfig(t, Config{
		URL: brokertest.URL(t), Queue: name, Scenario: scenario, Faults: faults, Gap: gap, Quiet: quiet,
		Rate: idemRate, ConsumerBin: bin, Name: name, Dir: dir,
		ConsumerArgs:  IdempotentArgs(dir, store.arg, store.table, store.work, idemClaimTimeout),
		ManagementURL: brokertest.ManagementURL(),
	}, noLoss)
	var rows map[int]int
	if sameTx {
		rows = store.rows(t)
	}
	idem, err := Idempotent(rep, dir, db, idemClaimTimeout, rows)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Print(idem.String())
	if !idem.OK() {
		t.Errorf("the work was not done once per message where it must be:\n%s", idem)
	}
	if idem.Messages == 0 {
		t.Error("no work was done: the run proved nothing")
	}
	return idem
}
