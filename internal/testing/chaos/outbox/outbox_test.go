package outboxchaos

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/dbtest"
)

// run runs the scenario on SQLite and PostgreSQL and fails on any record
// lost or any duplicate unexplained.
func run(t *testing.T, n, rate, kills int, lease time.Duration) {
	url := brokertest.URL(t)
	pg := dbtest.PostgresURL(t)
	bin, err := Build(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{"SQLite", "PostgreSQL"} {
		t.Run(db, func(t *testing.T) {
			dir := t.TempDir()
			table := dbtest.UniqueName(t, "acemq_outbox")
			dsn := filepath.Join(dir, "outbox.db")
			if db == "PostgreSQL" {
				dsn = pg
				dbtest.DropWhenDone(t, pg, table)
			}
			rep, err := Run(t.Context(), Config{Bin: bin, DB: dsn, Table: table, BrokerURL: url,
				Queue: brokertest.UniqueName(t, "outbox-chaos"), N: n, Rate: rate, Kills: kills, Batch: 20, Lease: lease, Dir: dir})
			if err != nil {
				t.Fatalf("%v (%v)", err, rep)
			}
			t.Log(rep)
			if !rep.OK() {
				t.Errorf("FAILED: %v", rep)
			}
		})
	}
}

// The short run, in every `go test ./...`: 300 records, 3 kills.
func TestOutboxChaosShort(t *testing.T) {
	run(t, 300, 150, 3, 2*time.Second)
}
