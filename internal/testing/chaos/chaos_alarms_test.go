//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// Disk alarms on one node, and a memory alarm on one node of the cluster
// (docs/reliability.md, "Alarms on a cluster"): publishers blocked,
// consumers running, nothing confirmed lost, and the harness's Conn
// reporting what docs/observability.md says: Health up and ready, with the
// family's sentence and RabbitMQ's reason; a publish with a deadline failing
// with ErrBlocked.

// TestChaosDiskAlarm is the short disk-alarm run (1 alarm; make test's
// CPU is shared by every part) on the node this process's environment
// names: make chaos-disk-alarm, on a chaos node of its own (3.10 and 4.3).
func TestChaosDiskAlarm(t *testing.T) { diskAlarms(t, 1, time.Second, 45*time.Second) }

// TestChaosDiskAlarmFull is make chaos's: 5 disk alarms.
func TestChaosDiskAlarmFull(t *testing.T) { diskAlarms(t, 5, 2*time.Second, 120*time.Second) }

// TestChaosClusterMemoryAlarm is the short run (1 alarm) of a memory alarm
// on the cluster's third node, while the harness's publisher and the
// consumer process are connected to the first: RabbitMQ blocks every
// publisher of the cluster. make chaos-cluster-alarm.
func TestChaosClusterMemoryAlarm(t *testing.T) { clusterAlarms(t, 1, time.Second, 45*time.Second) }

// TestChaosClusterMemoryAlarmFull is make chaos's: 5 alarms.
func TestChaosClusterMemoryAlarmFull(t *testing.T) {
	clusterAlarms(t, 5, 2*time.Second, 120*time.Second)
}

func diskAlarms(t *testing.T, faults int, gap, quiet time.Duration) {
	bin := buildConsumer(t)
	name := brokertest.UniqueName(t, "acemq.chaos")
	rep := runConfig(t, Config{
		URL: brokertest.URL(t), Queue: name, QueueType: transport.Quorum, Rungs: contract.AtLeastOnceRungs,
		Scenario: Alarm, Faults: faults, Gap: gap, Quiet: quiet,
		ConsumerBin: bin, Name: name,
		ManagementURL: brokertest.ManagementURL(),
		Alarm:         diskAlarm(nil),
	}, noLoss)
	checkBlocked(t, rep, faults, "disk")
}

func clusterAlarms(t *testing.T, faults int, gap, quiet time.Duration) {
	urls := clusterURLs(t)
	mgmt := managementURLs(t, urls)
	nodes := clusterNodes()
	bin := buildConsumer(t)
	name := clusterName(t, "acemq.chaos")
	env := []string{"RABBITMQ_NODENAME=" + nodes[2], "ACEMQ_RABBITMQ_SERIES=" + envOr("ACEMQ_RABBITMQ_SERIES", "3.10")}
	rep := runConfig(t, Config{
		URL: urls[0], Fallbacks: urls[1:], Queue: name, QueueType: transport.Quorum, Rungs: contract.AtLeastOnceRungs,
		Scenario: Alarm, Faults: faults, Gap: gap, Quiet: quiet,
		ConsumerBin: bin, Name: name,
		ManagementURL: mgmt[0], ManagementFallbacks: mgmt[1:],
		BrokerLogs: clusterLogs(),
		Alarm:      memoryAlarmOn(env),
	}, noLoss)
	checkBlocked(t, rep, faults, "memory")
	t.Logf("the alarm on %s blocked the harness's connection to %s", nodes[2], rabbitmq.RedactURL(urls[0]))
}

// checkBlocked checks what the harness's Conn reported while blocked
// against docs/observability.md: each alarm seen by Health, which stayed up
// (ready) with the family's sentence and the alarm's reason, and the
// publish tried with a deadline failing with ErrBlocked (the run checks
// errors.Is) and naming the reason.
func checkBlocked(t *testing.T, rep Report, faults int, resource string) {
	t.Helper()
	if len(rep.BlockedAfter) != faults {
		t.Errorf("Health said blocked for %d of %d alarms", len(rep.BlockedAfter), faults)
	}
	reason := "low on " + resource
	want := string(contract.HealthUp) + ": the broker has blocked this connection; publishing is paused: " + reason
	if rep.BlockedHealth != want {
		t.Errorf("Health while blocked: %q, want %q", rep.BlockedHealth, want)
	}
	if !strings.Contains(rep.BlockedErr, reason) {
		t.Errorf("the publish error while blocked, %q, does not name the reason %q", rep.BlockedErr, reason)
	}
}

// diskAlarm raises a disk alarm on the node env names (this process's own
// when nil) by raising its free-disk limit above any disk's free space, and
// clears it by putting back the limit it found.
func diskAlarm(env []string) func(ctx context.Context, on bool) error {
	return limitAlarm(env, "rabbit_disk_monitor:get_disk_free_limit().", "set_disk_free_limit", "1000000000000000000")
}

// memoryAlarmOn raises a memory alarm on the node env names, as memoryAlarm
// does on this process's own.
func memoryAlarmOn(env []string) func(ctx context.Context, on bool) error {
	return limitAlarm(env, "vm_memory_monitor:get_vm_memory_high_watermark().", "set_vm_memory_high_watermark", "0.000001")
}

// limitAlarm makes a Config.Alarm that raises an alarm by setting a limit
// of the node env names (set, to raise) and clears it by setting it back
// to what get read, through `scripts/rabbitmq.sh ctl`.
func limitAlarm(env []string, get, set, raise string) func(ctx context.Context, on bool) error {
	var previous string
	ctl := func(ctx context.Context, args ...string) (string, error) {
		return scriptEnv(ctx, env, "scripts/rabbitmq.sh", append([]string{"ctl"}, args...)...)
	}
	return func(ctx context.Context, on bool) error {
		if on {
			out, err := ctl(ctx, "eval", get)
			if err != nil {
				return err
			}
			previous = strings.TrimSpace(out)
			_, err = ctl(ctx, set, raise)
			return err
		}
		if previous == "" {
			return fmt.Errorf("clearing an alarm that was not raised")
		}
		_, err := ctl(ctx, set, previous)
		return err
	}
}
