package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acemq-go/acemq/bench/internal/harness"
)

var (
	openLoopRates    = flag.String("open-loop-rates", "1000,4000", "comma-separated rates (msgs/s) the open-loop scenario offers, one row each")
	openLoopDuration = flag.Duration("open-loop-duration", 0, "how long each open-loop run offers its rate (default 10s, quick 3s)")
)

// openLoopOptions reads the open-loop flags, and notes each rate's rows.
func openLoopOptions(c config) (harness.OpenLoopOptions, error) {
	o := harness.OpenLoopOptions{Duration: *openLoopDuration}
	if o.Duration == 0 {
		o.Duration = 10 * time.Second
		if c.quick {
			o.Duration = 3 * time.Second
		}
	}
	for _, f := range strings.Split(*openLoopRates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || rate <= 0 {
			return o, fmt.Errorf("-open-loop-rates: %q is no rate above 0", f)
		}
		o.Rates = append(o.Rates, rate)
		name := harness.OpenLoopAt(rate)
		rowNotes[name+"/raw"] = "one channel publishing with deferred confirms, window 512; 8 goroutines on one deliveries channel (Qos 100) decoding and acking; latency = handler - due"
		rowNotes[name+"/raw+envelope"] = "the same, sending AceMQ's headers"
		rowNotes[name+"/acemq"] = "Publisher.Publish, a goroutine per message, 512 at most; Consume WithConcurrency(8), WithPrefetch(100); latency = handler - due"
	}
	return o, nil
}

// openLoopNote says how the open-loop rows were measured.
func openLoopNote(o harness.OpenLoopOptions) string {
	return fmt.Sprintf("%s: each rate offered for %v to a plan (message i due at start + i/rate, whatever became of the sends before it: no coordinated omission) by one publisher, consumed in the same process at concurrency 8, prefetch 100; latency = the handler's start - the message's due time; msgs/s are the messages that arrived; a row is flagged when a round's send lag p99 (the send's start - its due time) passed %v or messages did not arrive within %v of the last confirm", harness.OpenLoop, o.Duration, harness.BehindLimit, harness.DrainGrace)
}
