//go:build chaos

package chaos

import (
	"os"
	"testing"
	"time"
)

// TestChaosFull runs the full scenarios (20 kills, 10 forced closes, 3
// broker restarts) and prints their reports. It is built only with the chaos
// tag, by `make chaos`, so the normal test run neither runs nor skips it.
// The restart scenario stops and starts the broker node, which
// would break every other test using it, so it also needs CHAOS_RESTART=yes,
// which only `make chaos` sets, on a node of its own (see the Makefile).
func TestChaosFull(t *testing.T) {
	bin := buildConsumer(t)
	for _, sc := range []struct {
		name   string
		faults int
		gap    time.Duration
	}{{Kill, 20, 2 * time.Second}, {Close, 10, 2 * time.Second}, {Restart, 3, 5 * time.Second}} {
		t.Run(sc.name, func(t *testing.T) {
			if sc.name == Restart && os.Getenv("CHAOS_RESTART") != "yes" {
				t.Fatal("the restart scenario restarts the broker node: it needs CHAOS_RESTART=yes and a node of its own (make chaos)")
			}
			runScenario(t, bin, sc.name, sc.faults, sc.gap, 120*time.Second)
		})
	}
}
