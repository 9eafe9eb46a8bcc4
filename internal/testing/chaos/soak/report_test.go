package soak

import (
	"strings"
	"testing"
)

// TestProblems holds the verdict to the family's allowances, each at its
// edge, without a broker.
func TestProblems(t *testing.T) {
	base := Reading{Descriptors: 16, Threads: 8, RSS: 12 << 20, Goroutines: 17}
	pass := Report{Closes: 20, Disturbed: 20, Ran: true,
		Baseline: []Reading{base, base, base}, Final: []Reading{base, base, base},
		AtFirstClose: Line{Published: 100, Consumed: 90}, AtEnd: Line{Published: 5000, Consumed: 5000}}
	at := func(change func(*Reading)) []Reading {
		r := base
		change(&r)
		// One reading far off: the median does not see it.
		return []Reading{r, {Descriptors: 1000, Threads: 1000, RSS: 1 << 40, Goroutines: 1000}, r}
	}
	for _, c := range []struct {
		what   string
		change func(*Report)
		want   string // a word of the one problem, or "" for none
	}{
		{"unchanged", func(*Report) {}, ""},
		{"descriptors +16", func(r *Report) { r.Final = at(func(x *Reading) { x.Descriptors += 16 }) }, ""},
		{"descriptors +17", func(r *Report) { r.Final = at(func(x *Reading) { x.Descriptors += 17 }) }, "descriptors 16 → 33"},
		{"threads +16", func(r *Report) { r.Final = at(func(x *Reading) { x.Threads += 16 }) }, ""},
		{"threads +17", func(r *Report) { r.Final = at(func(x *Reading) { x.Threads += 17 }) }, "threads 8 → 25"},
		{"RSS 2×", func(r *Report) { r.Final = at(func(x *Reading) { x.RSS *= 2 }) }, ""},
		{"RSS over 2×", func(r *Report) { r.Final = at(func(x *Reading) { x.RSS = x.RSS*2 + 1 }) }, "RSS 12.0 MiB → 24.0 MiB"},
		{"goroutines +17", func(r *Report) { r.Final = at(func(x *Reading) { x.Goroutines += 17 }) }, "goroutines 17 → 34"},
		{"two final readings", func(r *Report) { r.Final = r.Final[:2] }, "want 3 of each"},
		{"not running", func(r *Report) { r.Ran = false }, "not running"},
		{"nothing published after the first close", func(r *Report) { r.AtEnd.Published = 100 }, "did not move"},
		{"nothing consumed after the first close", func(r *Report) { r.AtEnd.Consumed = 90 }, "did not move"},
		{"no close disturbed it", func(r *Report) { r.Disturbed = 0 }, "none of the 20 closes"},
		{"a loss", func(r *Report) { r.Exit = "exit status 1: 3 confirmed messages were not consumed" }, "did not exit 0"},
		{"a line not JSON", func(r *Report) { r.BadLines = []string{"hello"} }, "not the load's JSON"},
	} {
		r := pass
		c.change(&r)
		got := r.Problems()
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: problems %q, want none", c.what, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: problems %q, want one saying %q", c.what, got, c.want)
		}
		if s := r.String(); (c.want == "") != strings.Contains(s, "PASSED") {
			t.Errorf("%s: the report does not say its verdict:\n%s", c.what, s)
		}
	}
}
