package stats

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMedianLeavesItsInputAlone(t *testing.T) {
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("Median sorted its input: %v", in)
	}
}

func TestSpread(t *testing.T) {
	if lo, hi := Spread([]float64{2, 9, 4}); lo != 2 || hi != 9 {
		t.Errorf("Spread = %v..%v, want 2..9", lo, hi)
	}
	if lo, hi := Spread(nil); lo != 0 || hi != 0 {
		t.Errorf("Spread(nil) = %v..%v, want 0..0", lo, hi)
	}
}

func TestRatiosPairRoundsAndSkipZeroBaselines(t *testing.T) {
	got := Ratios([]float64{50, 30, 80}, []float64{100, 0, 40})
	want := []float64{0.5, 2}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Ratios = %v, want %v", got, want)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{0, 1 * time.Millisecond},
	} {
		if got := Percentile(ds, c.p); got != c.want {
			t.Errorf("Percentile(p%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(nil) = %v, want 0", got)
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("Percentile of one = %v, want 7", got)
	}
}

func TestRate(t *testing.T) {
	if got := Rate(500, 2*time.Second); got != 250 {
		t.Errorf("Rate = %v, want 250", got)
	}
	if got := Rate(5, 0); got != 0 {
		t.Errorf("Rate over 0s = %v, want 0", got)
	}
}
