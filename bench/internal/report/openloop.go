package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/acemq-go/acemq/bench/internal/harness"
	"github.com/acemq-go/acemq/bench/internal/stats"
)

// handled is how many messages a run handled: in an open-loop run, those
// that arrived (its Late); in the others, every one.
func handled(s harness.Series, x harness.Sample) int {
	if s.Offered > 0 {
		return len(x.Late)
	}
	return s.Messages
}

// openLoop fills an open-loop row's own fields and flags it, as the
// family's workloads tool refuses such a run, when a round's generator
// fell behind its plan (its latencies then measure the generator too) or
// messages did not arrive.
func openLoop(row *Row, s harness.Series) {
	if s.Offered <= 0 {
		return
	}
	row.OfferedPerSec = ptr(s.Offered)
	var worst time.Duration
	var behind []string
	for _, x := range s.Samples {
		lag := stats.Percentile(x.SendLag, 99)
		worst = max(worst, lag)
		if lag > harness.BehindLimit {
			behind = append(behind, fmt.Sprintf("round %d: send lag p99 %.0fms", x.Round, ms(lag)))
		}
		row.Missing += s.Messages - len(x.Late)
	}
	row.SendLagP99Ms = ptr(ms(worst))
	if len(behind) > 0 {
		row.Flags = append(row.Flags, fmt.Sprintf("generator fell behind (%s)", strings.Join(behind, ", ")))
	}
	if row.Missing > 0 {
		row.Flags = append(row.Flags, fmt.Sprintf("%d messages missing", row.Missing))
	}
}

// writeOpenLoop writes the open-loop rows' own table, if there are any.
func writeOpenLoop(b *strings.Builder, rows []Row) {
	header := false
	for _, row := range rows {
		if row.OfferedPerSec == nil {
			continue
		}
		if !header {
			b.WriteString("\n| open loop | implementation | offered msgs/s | achieved msgs/s | arrived | send lag p99 ms | latency p50 / p99 / max ms | CPU µs/msg | allocs/msg | flagged |\n")
			b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
			header = true
		}
		offered := row.Messages * row.Rounds
		fmt.Fprintf(b, "| %s | %s | %.0f | %.0f | %d of %d | %.1f | %s | %.1f | %.0f | %s |\n",
			row.Scenario, row.Implementation, *row.OfferedPerSec, row.MsgsPerSec, offered-row.Missing, offered,
			*row.SendLagP99Ms, late(row), row.CPUMicrosPerMsg, row.AllocsPerMsg, strings.Join(row.Flags, "; "))
	}
}
