package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/acemq-go/acemq/bench/internal/harness"
)

// outboxRecords sizes the outbox scenarios (-postgres, main's, gives their
// PostgreSQL).
var outboxRecords = flag.Int("outbox-records", 0, "records per run of the outbox relay scenarios (default 5000, quick 1000)")

func init() {
	rowNotes[harness.OutboxRelaySQLite+"/raw"] = "select 100 rows, publish with amqp091-go confirms, update: no lease, no failure counting"
	rowNotes[harness.OutboxRelaySQLite+"/"+harness.RawLeasedRelay] = "raw, the batch claimed under a lease as the relay claims it (UPDATE ... RETURNING), the mark clearing it: acemq's baseline"
	rowNotes[harness.OutboxRelaySQLite+"/acemq"] = "outbox.Relay.Run, batches of 100, the next claimed while one is published: lease, confirms, mark"
	rowNotes[harness.OutboxRelayPostgres+"/raw"] = rowNotes[harness.OutboxRelaySQLite+"/raw"]
	rowNotes[harness.OutboxRelayPostgres+"/"+harness.RawLeasedRelay] = "raw, the batch claimed FOR UPDATE SKIP LOCKED under a lease as the relay claims it, the mark clearing it: acemq's baseline"
	rowNotes[harness.OutboxRelayPostgres+"/acemq"] = "outbox.Relay.Run, batches of 100, the next claimed while one is published: FOR UPDATE SKIP LOCKED lease, confirms, mark"
}

// runOutbox runs the outbox relay scenarios (records/s: the report's
// messages a second).
func runOutbox(ctx context.Context, b *harness.Broker, c config, log io.Writer) []harness.Series {
	records := *outboxRecords
	if records == 0 {
		records = 5000
		if c.quick {
			records = 1000
		}
	}
	dir, err := os.MkdirTemp("", "acemq-bench-outbox-")
	if err != nil {
		fmt.Fprintln(log, "outbox scenarios:", err)
		return nil
	}
	defer os.RemoveAll(dir)
	return harness.RunOutbox(ctx, b, harness.OutboxOptions{URL: c.url, PostgresURL: c.postgres, Records: records,
		Batch: 100, Rounds: c.rounds, Dir: dir, Log: log})
}
