package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
)

// pingPong blocks in a channel receive n times, each time woken by the
// region's goroutine.
func pingPong(n int) {
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
		close(pong)
	}()
	for i := range n {
		ping <- i
		<-pong
	}
	close(ping)
}

func TestCountsTheWakeUpsOfEachRegionByWhereTheGoroutineBlocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		trace.WithRegion(context.Background(), "ping / pong", func() { pingPong(500) })
	}
	trace.WithRegion(context.Background(), "not a contender", func() { pingPong(10) })
	trace.Stop()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	regions, err := count(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(regions) != 1 || regions[0].name != "ping / pong" || regions[0].runs != 2 {
		t.Fatalf("regions: %+v, want the one region \"ping / pong\", run twice", regions)
	}
	// The echoing goroutine (pingPong.func1) blocks for each of the 1,000
	// exchanges, in its receive, unless the next ping came first, and
	// maybe in its send too: between 500 and 2,000 wake-ups, named.
	r := regions[0]
	if got := r.where["github.com/acemq-go/acemq/bench/cmd/trace-wakeups.pingPong.func1"]; got < 500 || got > 2000 {
		t.Errorf("wake-ups of the echoing goroutine: %d, want 500 to 2,000 (2 runs of 500 exchanges); by where: %v", got, r.byWhere())
	}
	if r.total < r.where["github.com/acemq-go/acemq/bench/cmd/trace-wakeups.pingPong.func1"] {
		t.Errorf("total %d below one function's count: %v", r.total, r.byWhere())
	}
}
