// Command trace-wakeups reads an execution trace written by acemq-bench
// -trace and counts, for each contender's runs (the regions named
// "scenario / contender"), the goroutine wake-ups in the whole process:
// each time a goroutine blocked on a channel, a lock, the network or a
// timer was made runnable again. A hand-over from one goroutine to another
// costs a wake-up, and on a machine with idle processors a thread woken to
// run it, so the difference between two contenders' counts per message is
// the scheduling work one does and the other does not. Each wake-up is
// named by the function the goroutine was blocked in.
//
//	go run ./cmd/trace-wakeups -per 2000 -top 12 /tmp/rr.trace
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	per := flag.Int("per", 1, "divide the counts by this (the messages or round trips of one run)")
	top := flag.Int("top", 10, "how many of the functions blocked in to list")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: trace-wakeups [-per N] [-top N] TRACE")
		os.Exit(2)
	}
	regions, err := count(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "trace-wakeups:", err)
		os.Exit(1)
	}
	for _, r := range regions {
		fmt.Printf("%s: %d runs, %.1f wake-ups per %d\n", r.name, r.runs, float64(r.total)/float64(r.runs)/float64(*per), *per)
		for _, w := range r.byWhere()[:min(*top, len(r.where))] {
			fmt.Printf("  %6.2f  %s\n", float64(w.n)/float64(r.runs)/float64(*per), w.where)
		}
	}
}

// region is one contender's runs: its wake-ups, all and by where the
// goroutine was blocked.
type region struct {
	name  string
	runs  int
	total int
	where map[string]int
}

type tally struct {
	where string
	n     int
}

func (r *region) byWhere() []tally {
	var ts []tally
	for w, n := range r.where {
		ts = append(ts, tally{w, n})
	}
	slices.SortFunc(ts, func(a, b tally) int { return cmp.Or(b.n-a.n, strings.Compare(a.where, b.where)) })
	return ts
}

// count goes through the trace once: a wake-up between a region's begin
// and its end counts for that region.
func count(path string) ([]*region, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := trace.NewReader(f)
	if err != nil {
		return nil, err
	}
	byName := map[string]*region{}
	var order []*region
	var open *region
	blocked := map[trace.GoID]string{} // where each goroutine waiting blocked
	for {
		ev, err := rd.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventRegionBegin:
			name := ev.Region().Type
			if !strings.Contains(name, " / ") {
				continue
			}
			if byName[name] == nil {
				byName[name] = &region{name: name, where: map[string]int{}}
				order = append(order, byName[name])
			}
			open = byName[name]
			open.runs++
		case trace.EventRegionEnd:
			open = nil
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			id := st.Resource.Goroutine()
			from, to := st.Goroutine()
			switch {
			case to == trace.GoWaiting:
				blocked[id] = blockedIn(ev.Stack())
			case from == trace.GoWaiting && to == trace.GoRunnable && open != nil:
				open.total++
				open.where[cmp.Or(blocked[id], "(blocked before the trace)")]++
			}
		}
	}
	return order, nil
}

// blockedIn names the first function outside the runtime and the standard
// library's plumbing on the stack of a goroutine as it blocked.
func blockedIn(s trace.Stack) string {
	where := "(no stack)"
	for fr := range s.Frames() {
		where = fr.Func
		if !strings.HasPrefix(fr.Func, "runtime.") && !strings.HasPrefix(fr.Func, "internal/") &&
			!strings.HasPrefix(fr.Func, "sync.") && !strings.HasPrefix(fr.Func, "time.") {
			return fr.Func
		}
	}
	return where
}
