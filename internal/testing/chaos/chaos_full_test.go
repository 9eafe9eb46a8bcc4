//go:build chaos

package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// The scenarios here act on the whole broker node (an alarm blocks every
// publisher on it; a restart stops it), so they are built only with the
// chaos tag and run alone: never beside the other packages' tests.

// TestChaosFull runs the full scenarios of one node (20 kills, 10 forced
// closes, 5 memory alarms) and prints their reports; `make chaos` runs it
// on a node of its own, then TestChaosRestart.
func TestChaosFull(t *testing.T) {
	brokertest.URL(t) // fail (or skip outside CI) before building when there is no broker
	bin := buildConsumer(t)
	for _, sc := range []struct {
		name   string
		faults int
	}{{Kill, 20}, {Close, 10}, {Alarm, 5}} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, bin, sc.name, sc.faults, 2*time.Second, 120*time.Second) })
	}
}

// TestChaosRestart stops the broker node cleanly and starts it again, 3
// times, under a quorum source queue with each kind of rung, at the
// tester's policy and rate (RungPolicy, RungRate). With at-least-once rungs
// any loss fails it. With contract rungs RabbitMQ drops what comes home from
// a rung before the source queue has a leader again: those losses are
// reported (EXPECTED LOSS), and fail it only when a message that never
// waited on a rung is lost too. It restarts the node this process's
// environment names, so it needs CHAOS_RESTART=yes and a node of its own
// (make chaos, on RabbitMQ 3.10, 4.0 and 4.3).
func TestChaosRestart(t *testing.T) {
	bin := restartable(t)
	t.Run(string(contract.AtLeastOnceRungs), func(t *testing.T) { restarts(t, bin, contract.AtLeastOnceRungs, 3, 5*time.Second, noLoss) })
	t.Run(string(contract.ContractRungs), func(t *testing.T) { restarts(t, bin, contract.ContractRungs, 3, 5*time.Second, rungLoss) })
}

// TestChaosRestartShort is the short run for `make test` (make
// chaos-restart, on a node of its own): one restart under a quorum source
// queue with at-least-once rungs; any loss fails it.
func TestChaosRestartShort(t *testing.T) {
	restarts(t, restartable(t), contract.AtLeastOnceRungs, 1, 2*time.Second, noLoss)
}

// restartable checks that the test may restart the broker and builds the
// consumer.
func restartable(t *testing.T) string {
	mayRestart(t)
	return buildConsumer(t)
}

// mayRestart fails the test unless its broker node is its own to restart.
func mayRestart(t *testing.T) {
	brokertest.URL(t)
	if os.Getenv("CHAOS_RESTART") != "yes" {
		t.Fatal("a restart test restarts the broker node: it needs CHAOS_RESTART=yes and a node of its own (make chaos, make chaos-restart)")
	}
}

func restarts(t *testing.T, bin string, rungs contract.RungKind, faults int, gap time.Duration, v verdict) {
	name := brokertest.UniqueName(t, "acemq.chaos")
	runConfig(t, Config{
		URL: brokertest.URL(t), Queue: name, QueueType: transport.Quorum, Policy: RungPolicy, Rungs: rungs,
		Scenario: Restart, Faults: faults, Rate: RungRate, Gap: gap, Quiet: 60 * time.Second,
		ConsumerBin: bin, Name: name,
		ManagementURL:  brokertest.ManagementURL(),
		BrokerSettings: deadLetterRetry(t, nil),
		BrokerLogs:     []string{nodeLog()},
		RestartBroker:  restartBroker,
	}, v)
}

// deadLetterRetry reads, through `scripts/rabbitmq.sh ctl` on the node this
// process's environment (and env, NAME=VALUE) names, how long the node lets
// an at-least-once dead letter wait for its target's confirm before it sends
// it again: a rung's hold lasts that long.
func deadLetterRetry(t *testing.T, env []string) []string {
	const key = "dead_letter_worker_publisher_confirm_timeout"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // rabbitmqctl boots a VM of its own: minutes on a machine this busy
	defer cancel()
	out, err := scriptEnv(ctx, env, "scripts/rabbitmq.sh", "ctl", "eval", "application:get_env(rabbit, "+key+").")
	if err != nil {
		t.Fatalf("reading the node's %s: %v", key, err)
	}
	v := strings.TrimSpace(out)
	if ms, ok := strings.CutPrefix(v, "{ok,"); ok {
		v = strings.TrimSuffix(ms, "}") + "ms"
	}
	return []string{key + "=" + v}
}

// nodeLog is the log file of the node this process's environment names,
// where scripts/rabbitmq.sh has it write it.
func nodeLog() string {
	node := envOr("RABBITMQ_NODENAME", "acemq@localhost")
	dir := os.Getenv("ACEMQ_RABBITMQ_DIR")
	switch {
	case dir != "":
	case os.Getenv("ACEMQ_RABBITMQ_SERIES") == "4.0":
		dir = filepath.Join(envOr("ACEMQ_TRIXIE_ROOT", "/var/cache/acemq/trixie"), "srv", "acemq", node)
	case os.Getenv("ACEMQ_RABBITMQ_SERIES") == "4.3":
		dir = filepath.Join(envOr("ACEMQ_SID_ROOT", "/var/cache/acemq/sid"), "srv", "acemq", node)
	default:
		root, _ := repoRoot()
		dir = filepath.Join(root, ".rabbitmq")
	}
	return filepath.Join(dir, "log", node+".log")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
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
func memoryAlarm() func(ctx context.Context, on bool) error { return memoryAlarmOn(nil) }
