//go:build chaos

package chaos

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// TestChaosFailover kills the cluster node hosting the quorum source
// queue's leader twice (starting it again after each recovery), on the
// three-node cluster of scripts/cluster.sh, whose AMQP URLs
// ACEMQ_CLUSTER_URLS lists (`make chaos-cluster` starts it and sets it).
func TestChaosFailover(t *testing.T) { failover(t, 2) }

// TestChaosFailoverFull is the full run, five leader kills (`make chaos`).
func TestChaosFailoverFull(t *testing.T) { failover(t, 5) }

func failover(t *testing.T, kills int) {
	urls := strings.Fields(os.Getenv("ACEMQ_CLUSTER_URLS"))
	if len(urls) < 3 {
		t.Fatal("ACEMQ_CLUSTER_URLS must list the three nodes' AMQP URLs (make chaos-cluster starts the cluster and sets it)")
	}
	bin := buildConsumer(t)
	name := brokertest.UniqueName(t, "acemq.chaos")
	runConfig(t, Config{
		URL: urls[0], Fallbacks: urls[1:], Queue: name, QueueType: transport.Quorum,
		Scenario: Failover, Faults: kills, Gap: 2 * time.Second, Quiet: 120 * time.Second,
		ConsumerBin: bin, Name: name,
		KillLeader: func(ctx context.Context, queue string) (string, error) {
			out, err := cluster(ctx, "leader", queue)
			if err != nil {
				return "", err
			}
			node := strings.TrimSpace(out)
			_, err = cluster(ctx, "kill", node)
			return node, err
		},
		RestartNode: func(ctx context.Context, node string) error {
			_, err := cluster(ctx, "restart", node)
			return err
		},
	})
}

// cluster runs scripts/cluster.sh with args and returns its standard output.
func cluster(ctx context.Context, args ...string) (string, error) {
	return script(ctx, "scripts/cluster.sh", args...)
}
