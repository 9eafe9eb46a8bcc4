package report

import (
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/bench/internal/harness"
)

func TestSummarizePairsRoundsWithRaw(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	all := []harness.Series{
		{Scenario: "s", Implementation: "raw", Messages: 100, Samples: []harness.Sample{
			{Round: 1, Elapsed: sec(1)}, {Round: 2, Elapsed: sec(2)}, {Round: 3, Elapsed: sec(1)},
		}},
		// Round 2 is slow for both (a noisy neighbour): its ratio stays 0.5.
		{Scenario: "s", Implementation: "acemq", Messages: 100, Samples: []harness.Sample{
			{Round: 1, Elapsed: sec(2)}, {Round: 2, Elapsed: sec(4)}, {Round: 3, Elapsed: sec(4)},
		}},
		{Scenario: "alone", Implementation: "raw", Messages: 10, Samples: []harness.Sample{
			{Round: 1, Elapsed: sec(1), Late: []time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 20 * time.Millisecond}},
		}},
	}
	rows := Summarize(all, map[string]string{"s/acemq": "a note"})
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	a := rows[1]
	if a.RatioToRaw == nil || *a.RatioToRaw != 0.5 || *a.RatioMin != 0.25 || *a.RatioMax != 0.5 {
		t.Errorf("acemq ratio %v (%v..%v), want 0.5 (0.25..0.5)", deref(a.RatioToRaw), deref(a.RatioMin), deref(a.RatioMax))
	}
	if a.MsgsPerSec != 25 || a.MsgsPerSecMin != 25 || a.MsgsPerSecMax != 50 || a.Seconds != 4 || a.Note != "a note" {
		t.Errorf("acemq row %+v", a)
	}
	if r := rows[0]; *r.RatioToRaw != 1 {
		t.Errorf("raw's ratio to itself %v", *r.RatioToRaw)
	}
	alone := rows[2]
	if alone.RatioToRaw != nil {
		t.Errorf("a scenario without raw got a ratio %v", *alone.RatioToRaw)
	}
	if alone.LateP50Ms == nil || *alone.LateP50Ms != 20 || *alone.LateP99Ms != 30 || *alone.LateMaxMs != 30 {
		t.Errorf("lateness %v / %v / %v, want 20 / 30 / 30", deref(alone.LateP50Ms), deref(alone.LateP99Ms), deref(alone.LateMaxMs))
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// A series naming its baseline is compared with that one's run in the same
// round, and its row says so.
func TestSummarizeUsesTheSeriesBaseline(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	all := []harness.Series{
		{Scenario: "kinds", Implementation: "contract", Baseline: "contract", Messages: 100, Samples: []harness.Sample{
			{Round: 1, Elapsed: sec(1)}, {Round: 2, Elapsed: sec(2)},
		}},
		{Scenario: "kinds", Implementation: "at-least-once", Baseline: "contract", Messages: 100, Samples: []harness.Sample{
			{Round: 1, Elapsed: sec(2)}, {Round: 2, Elapsed: sec(2)},
		}},
		// raw runs in the scenario too, but these rows name their own baseline.
		{Scenario: "kinds", Implementation: "raw", Baseline: "raw", Messages: 100, Samples: []harness.Sample{
			{Round: 1, Elapsed: sec(4)}, {Round: 2, Elapsed: sec(4)},
		}},
	}
	rows := Summarize(all, nil)
	c, a, raw := rows[0], rows[1], rows[2]
	if c.RatioToRaw == nil || *c.RatioToRaw != 1 || c.RatioTo != "contract" {
		t.Errorf("contract's ratio to itself %v (to %q)", deref(c.RatioToRaw), c.RatioTo)
	}
	if a.RatioToRaw == nil || *a.RatioToRaw != 0.75 || *a.RatioMin != 0.5 || *a.RatioMax != 1 || a.RatioTo != "contract" {
		t.Errorf("at-least-once ratio %v (%v..%v) to %q, want 0.75 (0.5..1) to contract", deref(a.RatioToRaw), deref(a.RatioMin), deref(a.RatioMax), a.RatioTo)
	}
	if raw.RatioTo != "" || raw.RatioToRaw == nil || *raw.RatioToRaw != 1 {
		t.Errorf("raw row %v to %q", deref(raw.RatioToRaw), raw.RatioTo)
	}
	var b strings.Builder
	if err := (Report{Rows: rows}).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 0.75 × contract | 0.50..1.00 |") {
		t.Errorf("the table does not name the baseline:\n%s", b.String())
	}
}

// CPU and allocations are per message, the median over the rounds.
func TestSummarizeCostPerMessage(t *testing.T) {
	all := []harness.Series{{Scenario: "s", Implementation: "acemq", Messages: 1000, Samples: []harness.Sample{
		{Round: 1, Elapsed: time.Second, CPU: 30 * time.Millisecond, Allocs: 90_000},
		{Round: 2, Elapsed: time.Second, CPU: 20 * time.Millisecond, Allocs: 80_000},
		{Round: 3, Elapsed: time.Second, CPU: 90 * time.Millisecond, Allocs: 100_000},
	}}}
	row := Summarize(all, nil)[0]
	if row.CPUMicrosPerMsg != 30 || row.AllocsPerMsg != 90 {
		t.Errorf("%.1f CPU µs/msg and %.1f allocs/msg, want 30 and 90", row.CPUMicrosPerMsg, row.AllocsPerMsg)
	}
	var b strings.Builder
	if err := (Report{Rows: []Row{row}}).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 30.0 | 90 |") {
		t.Errorf("the table lacks the cost columns:\n%s", b.String())
	}
}
