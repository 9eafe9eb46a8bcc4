package chaos

import (
	"fmt"
	"slices"
	"time"
)

// The accounting of RabbitMQ's Jepsen test of quorum queues (its checker's
// lost, duplicated, unexpected and recovered), one table row a run: what
// docs/reliability.md's "Cluster scale" table shows.

// JepsenHeader heads the rows of JepsenRow, as Markdown.
const JepsenHeader = "| run | faults | confirmed | lost | duplicated | unexpected | recovered | in doubt at heal, settled after | recovery (settle), median / max | recovery (publish), median / max |\n" +
	"|---|---:|---:|---:|---:|---:|---:|---|---|---|\n"

// JepsenRow is the report as a row under JepsenHeader. The run is named by
// its scenario, kind of rung and rate; lost is the confirmed messages
// never found; duplicated every extra copy found; unexpected what was
// found but never published; recovered the unconfirmed publishes that
// arrived anyway (Jepsen's indeterminate enqueues that were dequeued).
func (r Report) JepsenRow() string {
	rungs := "waits in the consumer"
	if len(r.RungQueues) > 0 {
		rungs = string(r.Rungs) + " rungs"
		if r.RungsDefault {
			rungs += " (the default)"
		}
	}
	lost := fmt.Sprint(len(r.Lost))
	if len(r.Lost) > 0 && r.OKButRungHops() {
		lost += " (expected: rung hops)"
	}
	return fmt.Sprintf("| %s, %s, %d/s | %d | %d | %s | %d | %d | %d | %d, %d | %s | %s |",
		r.Scenario, rungs, r.Rate, r.Faults, r.Confirmed, lost, r.Duplicates, len(r.Unexpected), r.Recovered,
		r.InDoubt, r.SettledAfterHeal, medianMax(r.Recovery), medianMax(r.PubRecovery))
}

// medianMax is "median / max" of ds, to the 10ms.
func medianMax(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	r := func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
	return r(s[len(s)/2]) + " / " + r(s[len(s)-1])
}
