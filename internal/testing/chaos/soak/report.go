package soak

import (
	"fmt"
	"strings"
)

// The family's allowances (CONTRACT.md section 22), on the medians of
// Readings baseline readings and as many final ones.
const (
	Readings       = 3
	MoreDescriptor = 16 // descriptors at most this many more
	MoreThreads    = 16 // threads at most this many more
	RSSTimes       = 2  // resident memory at most this many times the baseline
	// MoreGoroutines is this library's: the family does not read
	// goroutines; the thread allowance, applied to them.
	MoreGoroutines = 16
)

// Line is what the soak reads of the load's JSON lines.
type Line struct {
	Published int64 `json:"published"`
	Confirmed int64 `json:"confirmed"`
	Consumed  int64 `json:"consumed"`
	Failed    int64 `json:"failed"`
	Refused   int64 `json:"refused"`
}

// Report is what a soak saw.
type Report struct {
	Broker   string
	Closes   int    // closes sent
	Every    string // the time between them
	Baseline []Reading
	Final    []Reading
	// Disturbed counts the closes after which the load had opened new
	// connections before the next close (or, for the last one, before the
	// final readings).
	Disturbed int
	// AtFirstClose is the load's line just before the first close; AtEnd
	// its last line, printed after its drain.
	AtFirstClose, AtEnd Line
	Lines               int      // JSON lines read
	BadLines            []string // lines that are not the load's JSON (the first few)
	// Ran: the load was still running at the final readings.
	Ran bool
	// Exit is how the load ended once stopped: "" for status 0, which it
	// exits with only when every confirmed message was consumed.
	Exit string
	// Retried is how many deliveries the load's handler failed on purpose,
	// so that the ladder was used.
	Retried int64
}

// Problems are the family's verdict's failures, one line each; none is a
// pass.
func (r Report) Problems() []string {
	var p []string
	if len(r.Baseline) < Readings || len(r.Final) < Readings {
		return append(p, fmt.Sprintf("%d baseline and %d final readings, want %d of each", len(r.Baseline), len(r.Final), Readings))
	}
	b, f := median(r.Baseline), median(r.Final)
	if f.Descriptors > b.Descriptors+MoreDescriptor {
		p = append(p, fmt.Sprintf("descriptors %d → %d: more than +%d", b.Descriptors, f.Descriptors, MoreDescriptor))
	}
	if f.Threads > b.Threads+MoreThreads {
		p = append(p, fmt.Sprintf("threads %d → %d: more than +%d", b.Threads, f.Threads, MoreThreads))
	}
	if f.RSS > RSSTimes*b.RSS {
		p = append(p, fmt.Sprintf("RSS %s → %s: more than %d× the baseline", mib(b.RSS), mib(f.RSS), RSSTimes))
	}
	if f.Goroutines > b.Goroutines+MoreGoroutines {
		p = append(p, fmt.Sprintf("goroutines %d → %d: more than +%d", b.Goroutines, f.Goroutines, MoreGoroutines))
	}
	if !r.Ran {
		p = append(p, "the load was not running at the final readings")
	}
	if r.AtEnd.Published <= r.AtFirstClose.Published || r.AtEnd.Consumed <= r.AtFirstClose.Consumed {
		p = append(p, fmt.Sprintf("the counters did not move after the first close: published %d → %d, consumed %d → %d",
			r.AtFirstClose.Published, r.AtEnd.Published, r.AtFirstClose.Consumed, r.AtEnd.Consumed))
	}
	if r.Disturbed == 0 {
		p = append(p, fmt.Sprintf("none of the %d closes disturbed the load (it opened no new connection)", r.Closes))
	}
	if r.Exit != "" {
		p = append(p, "the load, stopped, did not exit 0 (it does only when every confirmed message was consumed): "+r.Exit)
	}
	if len(r.BadLines) > 0 {
		p = append(p, fmt.Sprintf("lines that are not the load's JSON: %q", r.BadLines))
	}
	return p
}

// String is the report as the soak prints it: the figures before and
// after, the allowances, and the verdict.
func (r Report) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "SOAK examples/standing-load on %s: %d closes of its connections %s apart\n", r.Broker, r.Closes, r.Every)
	if len(r.Baseline) > 0 && len(r.Final) > 0 {
		b, f := median(r.Baseline), median(r.Final)
		fmt.Fprintf(&s, "  descriptors %d → %d (at most +%d)\n", b.Descriptors, f.Descriptors, MoreDescriptor)
		fmt.Fprintf(&s, "  threads     %d → %d (at most +%d)\n", b.Threads, f.Threads, MoreThreads)
		fmt.Fprintf(&s, "  RSS         %s → %s (at most %d×)\n", mib(b.RSS), mib(f.RSS), RSSTimes)
		fmt.Fprintf(&s, "  goroutines  %d → %d (at most +%d)\n", b.Goroutines, f.Goroutines, MoreGoroutines)
		fmt.Fprintf(&s, "  connections opened %d → %d\n", b.Connections, f.Connections)
	}
	fmt.Fprintf(&s, "  (medians of %d readings; baseline: %s; final: %s)\n", Readings, readings(r.Baseline), readings(r.Final))
	fmt.Fprintf(&s, "  closes that disturbed it: %d of %d; deliveries failed on purpose (the ladder): %d\n", r.Disturbed, r.Closes, r.Retried)
	fmt.Fprintf(&s, "  lines %d; at the first close %+v; at the end %+v\n", r.Lines, r.AtFirstClose, r.AtEnd)
	lost := "0 lost (the load exited 0: every confirmed message consumed)"
	if r.Exit != "" {
		lost = "the load's exit: " + r.Exit
	}
	fmt.Fprintf(&s, "  %s\n", lost)
	if p := r.Problems(); len(p) > 0 {
		fmt.Fprintf(&s, "  FAILED: %s\n", strings.Join(p, "; "))
	} else {
		s.WriteString("  PASSED the family's allowances\n")
	}
	return s.String()
}

func readings(rs []Reading) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, "; ")
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
