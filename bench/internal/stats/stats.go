// Package stats holds the pure arithmetic of the benchmark report: medians,
// percentiles and the spread of per-round figures.
package stats

import (
	"math"
	"slices"
	"time"
)

// Median is the middle value of xs (the mean of the two middle ones for an
// even count); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// Spread is the smallest and largest of xs; zeros for none.
func Spread(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	return slices.Min(xs), slices.Max(xs)
}

// Ratios divides each round's figure by the baseline of the same round, so
// that noise shared by both (the machine is shared) cancels out. A round
// whose baseline is zero gives no ratio.
func Ratios(values, baseline []float64) []float64 {
	out := make([]float64, 0, len(values))
	for i := range min(len(values), len(baseline)) {
		if baseline[i] != 0 {
			out = append(out, values[i]/baseline[i])
		}
	}
	return out
}

// Percentile is the p-th percentile (0..100) of ds by the nearest-rank
// method: the smallest value with at least p% of the values at or below it.
// 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Rate is count per second over d; 0 for a zero or negative d.
func Rate(count int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(count) / d.Seconds()
}
