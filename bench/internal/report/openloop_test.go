package report

import (
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/bench/internal/harness"
)

// An open-loop row gives the rate offered, the rate achieved (the
// messages that arrived), the generator's worst send lag p99 and the
// latencies; it is flagged when a round's generator fell behind its plan
// (send lag p99 over harness.BehindLimit) or messages did not arrive, as
// the family's workloads tool refuses such a run.
func TestSummarizeFlagsAnOpenLoopRunThatFellBehindOrLostMessages(t *testing.T) {
	msec := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	lags := func(p99 time.Duration) []time.Duration {
		lag := make([]time.Duration, 100)
		lag[98], lag[99] = p99, p99
		return lag
	}
	lates := func(n int) []time.Duration {
		late := make([]time.Duration, n)
		for i := range late {
			late[i] = msec(i%10 + 1)
		}
		return late
	}
	all := []harness.Series{
		{Scenario: "open-loop 1000/s", Implementation: "raw", Messages: 100, Offered: 1000, Samples: []harness.Sample{
			{Round: 1, Elapsed: msec(100), Late: lates(100), SendLag: lags(msec(2))},
			{Round: 2, Elapsed: msec(100), Late: lates(100), SendLag: lags(msec(3))},
		}},
		{Scenario: "open-loop 1000/s", Implementation: "acemq", Messages: 100, Offered: 1000, Samples: []harness.Sample{
			{Round: 1, Elapsed: msec(100), Late: lates(100), SendLag: lags(msec(150))},
			{Round: 2, Elapsed: msec(100), Late: lates(80), SendLag: lags(msec(4))},
		}},
	}
	rows := Summarize(all, nil)
	raw, acemq := rows[0], rows[1]
	if raw.OfferedPerSec == nil || *raw.OfferedPerSec != 1000 || raw.SendLagP99Ms == nil || *raw.SendLagP99Ms != 3 || raw.Missing != 0 || len(raw.Flags) != 0 {
		t.Errorf("raw's row: offered %v, send lag p99 %v, missing %d, flags %q", deref(raw.OfferedPerSec), deref(raw.SendLagP99Ms), raw.Missing, raw.Flags)
	}
	if raw.MsgsPerSec != 1000 || *raw.LateP50Ms != 5 || *raw.LateP99Ms != 10 || *raw.LateMaxMs != 10 {
		t.Errorf("raw's rate %v and latencies %v / %v / %v", raw.MsgsPerSec, deref(raw.LateP50Ms), deref(raw.LateP99Ms), deref(raw.LateMaxMs))
	}
	if acemq.MsgsPerSec != 900 || acemq.MsgsPerSecMin != 800 {
		t.Errorf("acemq's achieved rate %v (min %v), want the messages that arrived: 900 (800)", acemq.MsgsPerSec, acemq.MsgsPerSecMin)
	}
	if acemq.Missing != 20 || *acemq.SendLagP99Ms != 150 || len(acemq.Flags) != 2 {
		t.Errorf("acemq's row: missing %d, send lag p99 %v, flags %q; want 20, 150 and two flags", acemq.Missing, deref(acemq.SendLagP99Ms), acemq.Flags)
	}

	var b strings.Builder
	if err := (Report{Rows: rows}).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| open loop | implementation | offered msgs/s | achieved msgs/s | arrived | send lag p99 ms | latency p50 / p99 / max ms | CPU µs/msg | allocs/msg | flagged |",
		"| open-loop 1000/s | raw | 1000 | 1000 | 200 of 200 | 3.0 | 5 / 10 / 10 | 0.0 | 0 |  |",
		"| open-loop 1000/s | acemq | 1000 | 900 | 180 of 200 | 150.0 | 5 / 10 / 10 | 0.0 | 0 | generator fell behind (round 1: send lag p99 150ms); 20 messages missing |",
		"| open-loop 1000/s | acemq | 100 | 2 | 0.100 | 900 | 800..1000 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}
