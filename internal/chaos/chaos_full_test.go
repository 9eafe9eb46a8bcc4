//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/brokertest"
)

// The scenarios here act on the whole broker node (an alarm blocks every
// publisher on it; a restart stops it), so they are built only with the
// chaos tag and run alone: never beside the other packages' tests.

// TestChaosFull runs the full scenarios (20 kills, 10 forced closes, 5
// memory alarms, 3 broker restarts) and prints their reports; `make chaos`
// runs it on a node of its own. The restart scenario also needs
// CHAOS_RESTART=yes, which only `make chaos` sets.
func TestChaosFull(t *testing.T) {
	brokertest.URL(t) // fail (or skip outside CI) before building when there is no broker
	bin := buildConsumer(t)
	for _, sc := range []struct {
		name   string
		faults int
		gap    time.Duration
	}{{Kill, 20, 2 * time.Second}, {Close, 10, 2 * time.Second}, {Alarm, 5, 2 * time.Second}, {Restart, 3, 5 * time.Second}} {
		t.Run(sc.name, func(t *testing.T) {
			if sc.name == Restart && os.Getenv("CHAOS_RESTART") != "yes" {
				t.Fatal("the restart scenario restarts the broker node: it needs CHAOS_RESTART=yes and a node of its own (make chaos)")
			}
			runScenario(t, bin, sc.name, sc.faults, sc.gap, 120*time.Second)
		})
	}
}

// TestChaosAlarm is the short alarm scenario (2 alarms) that `make test`
// runs after every other test has finished.
func TestChaosAlarm(t *testing.T) {
	brokertest.URL(t)
	runScenario(t, buildConsumer(t), Alarm, 2, time.Second, 45*time.Second)
}

func init() { newAlarm = memoryAlarm }

// memoryAlarm raises a memory alarm by setting the node's memory high
// watermark to a fraction no node can stay under, and clears it by putting
// back the watermark it found; through `scripts/rabbitmq.sh ctl`, on the
// node this process's environment names.
func memoryAlarm() func(ctx context.Context, on bool) error {
	var previous string
	return func(ctx context.Context, on bool) error {
		if on {
			out, err := rabbitmqctl(ctx, "eval", "vm_memory_monitor:get_vm_memory_high_watermark().")
			if err != nil {
				return err
			}
			previous = strings.TrimSpace(out)
			_, err = rabbitmqctl(ctx, "set_vm_memory_high_watermark", "0.000001")
			return err
		}
		if previous == "" {
			return fmt.Errorf("clearing an alarm that was not raised")
		}
		_, err := rabbitmqctl(ctx, "set_vm_memory_high_watermark", previous)
		return err
	}
}

func rabbitmqctl(ctx context.Context, args ...string) (string, error) {
	return script(ctx, "scripts/rabbitmq.sh", append([]string{"ctl"}, args...)...)
}
