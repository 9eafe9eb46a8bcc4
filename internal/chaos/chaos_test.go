package chaos

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/brokertest"
)

// TestChaosShort runs every scenario briefly (3 kills, 2 forced closes) in
// the normal `make test`; it fails on any lost or misplaced message.
func TestChaosShort(t *testing.T) {
	bin := buildConsumer(t)
	scenarios := []struct {
		name   string
		faults int
	}{{Kill, 3}, {Close, 2}}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			runScenario(t, bin, sc.name, sc.faults, time.Second, 45*time.Second)
		})
	}
}

// TestChaosFull runs the full scenarios (20 kills, 10 forced closes) and
// prints their reports: `make chaos`, which sets CHAOS=full.
func TestChaosFull(t *testing.T) {
	if os.Getenv("CHAOS") != "full" {
		t.Skip("the full chaos run needs CHAOS=full (make chaos)")
	}
	bin := buildConsumer(t)
	for _, sc := range []struct {
		name   string
		faults int
	}{{Kill, 20}, {Close, 10}} {
		t.Run(sc.name, func(t *testing.T) {
			runScenario(t, bin, sc.name, sc.faults, 2*time.Second, 120*time.Second)
		})
	}
}

func buildConsumer(t *testing.T) string {
	t.Helper()
	brokertest.URL(t) // skip (or fail under CI) before building when there is no broker
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func runScenario(t *testing.T, bin, scenario string, faults int, gap, quiet time.Duration) {
	url := brokertest.URL(t)
	name := brokertest.UniqueName(t, "acemq.chaos")
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{
		URL: url, Queue: name, Scenario: scenario, Faults: faults, Gap: gap, Quiet: quiet,
		ConsumerBin: bin, Dir: dir, Name: name,
		ManagementURL: brokertest.ManagementURL(),
		Logf:          t.Logf,
	})
	if err != nil {
		dumpStderr(t, dir)
		t.Fatal(err)
	}
	fmt.Print(rep.String())
	if rep.Confirmed == 0 {
		t.Errorf("nothing was confirmed: the run proved nothing")
	}
	if !rep.OK() {
		dumpStderr(t, dir)
		t.Errorf("messages lost, misplaced or unsettled:\n%s", rep)
	}
}

func dumpStderr(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == "accepted.log" {
			continue
		}
		b, _ := os.ReadFile(dir + "/" + e.Name())
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("%s:\n%s", e.Name(), b)
	}
}
