// Package report turns the harness's series into rows (medians, spreads,
// ratios to raw) and writes them as Markdown and JSON.
package report

import (
	"time"

	"github.com/acemq-go/acemq/bench/internal/harness"
	"github.com/acemq-go/acemq/bench/internal/stats"
)

// Baseline is the implementation every ratio divides by.
const Baseline = "raw"

// Row is one scenario with one implementation over every round.
type Row struct {
	Scenario       string `json:"scenario"`
	Implementation string `json:"implementation"`
	Messages       int    `json:"messages"`
	Rounds         int    `json:"rounds"`
	// Seconds and MsgsPerSec are medians over the rounds; the spread is the
	// slowest and fastest round.
	Seconds       float64 `json:"seconds"`
	MsgsPerSec    float64 `json:"msgs_per_s"`
	MsgsPerSecMin float64 `json:"msgs_per_s_min"`
	MsgsPerSecMax float64 `json:"msgs_per_s_max"`
	// RatioToRaw is the median of per-round msgs/s ratios to raw in the
	// same round; nil where raw does not run the scenario. Where the
	// series names another baseline, RatioTo names it and the ratios are to
	// it (the field keeps its name).
	RatioToRaw *float64 `json:"ratio_to_raw,omitempty"`
	RatioMin   *float64 `json:"ratio_min,omitempty"`
	RatioMax   *float64 `json:"ratio_max,omitempty"`
	RatioTo    string   `json:"ratio_to,omitempty"`
	// Lateness against the due time, for the delayed scenarios: the median
	// over rounds of each round's p50 and p99, and the largest of all.
	LateP50Ms *float64 `json:"late_p50_ms,omitempty"`
	LateP99Ms *float64 `json:"late_p99_ms,omitempty"`
	LateMaxMs *float64 `json:"late_max_ms,omitempty"`
	// CPUMicrosPerMsg and AllocsPerMsg are medians over the rounds of the
	// harness process's CPU time (user and system) and heap allocations
	// per message.
	CPUMicrosPerMsg float64  `json:"cpu_us_per_msg"`
	AllocsPerMsg    float64  `json:"allocs_per_msg"`
	Errors          []string `json:"errors,omitempty"`
	Note            string   `json:"note,omitempty"`

	// The open-loop scenario's (see openLoop): the rate offered, the
	// generator's worst round's send lag p99, the messages that did not
	// arrive (all rounds) and why the row is flagged. Its msgs/s are the
	// messages that arrived, its late columns their latency.
	OfferedPerSec *float64 `json:"offered_per_s,omitempty"`
	SendLagP99Ms  *float64 `json:"send_lag_p99_ms,omitempty"`
	Missing       int      `json:"missing,omitempty"`
	Flags         []string `json:"flags,omitempty"`
}

// Summarize makes one row per series. Ratios pair each round with raw's
// run of the same scenario in the same round, or with the run of the
// series' own Baseline.
func Summarize(all []harness.Series, notes map[string]string) []Row {
	rates := func(s harness.Series) map[int]float64 {
		m := make(map[int]float64, len(s.Samples))
		for _, x := range s.Samples {
			m[x.Round] = stats.Rate(handled(s, x), x.Elapsed)
		}
		return m
	}
	// Only a scenario that raw runs beside others has ratios: alone (the
	// per-message TTL contrast) raw would only be compared with itself.
	contenders := map[string]int{}
	for _, s := range all {
		contenders[s.Scenario]++
	}
	// Every series' rates by round, keyed scenario and implementation.
	byName := map[[2]string]map[int]float64{}
	for _, s := range all {
		byName[[2]string{s.Scenario, s.Implementation}] = rates(s)
	}
	rows := make([]Row, 0, len(all))
	for _, s := range all {
		row := Row{Scenario: s.Scenario, Implementation: s.Implementation, Messages: s.Messages,
			Rounds: len(s.Samples), Errors: s.Errors, Note: notes[s.Scenario+"/"+s.Implementation]}
		baseline := s.Baseline
		if baseline == "" && contenders[s.Scenario] > 1 {
			baseline = Baseline
		}
		var secs, rs, cpu, allocs []float64
		var values, base []float64
		for _, x := range s.Samples {
			r := stats.Rate(handled(s, x), x.Elapsed)
			secs = append(secs, x.Elapsed.Seconds())
			if s.Messages > 0 {
				cpu = append(cpu, float64(x.CPU.Microseconds())/float64(s.Messages))
				allocs = append(allocs, float64(x.Allocs)/float64(s.Messages))
			}
			rs = append(rs, r)
			if b, ok := byName[[2]string{s.Scenario, baseline}][x.Round]; ok {
				values, base = append(values, r), append(base, b)
			}
		}
		row.Seconds = stats.Median(secs)
		row.MsgsPerSec = stats.Median(rs)
		row.MsgsPerSecMin, row.MsgsPerSecMax = stats.Spread(rs)
		row.CPUMicrosPerMsg, row.AllocsPerMsg = stats.Median(cpu), stats.Median(allocs)
		if ratios := stats.Ratios(values, base); len(ratios) > 0 {
			lo, hi := stats.Spread(ratios)
			row.RatioToRaw, row.RatioMin, row.RatioMax = ptr(stats.Median(ratios)), ptr(lo), ptr(hi)
			if baseline != Baseline {
				row.RatioTo = baseline
			}
		}
		lateness(&row, s.Samples)
		openLoop(&row, s)
		rows = append(rows, row)
	}
	return rows
}

// lateness fills the row's lateness percentiles when its samples have any.
func lateness(row *Row, samples []harness.Sample) {
	var p50s, p99s []float64
	var worst time.Duration
	for _, x := range samples {
		if len(x.Late) == 0 {
			continue
		}
		p50s = append(p50s, ms(stats.Percentile(x.Late, 50)))
		p99s = append(p99s, ms(stats.Percentile(x.Late, 99)))
		worst = max(worst, stats.Percentile(x.Late, 100))
	}
	if len(p50s) == 0 {
		return
	}
	row.LateP50Ms, row.LateP99Ms, row.LateMaxMs = ptr(stats.Median(p50s)), ptr(stats.Median(p99s)), ptr(ms(worst))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr(f float64) *float64 { return &f }
