//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// clientHold is how long a cut that no client gets through lasts: amqp091
// takes a connection for dead after three missed heartbeats of 10s, so
// after 30s the publisher and the consumer fall back to another node, and
// the 10s more show them carrying on there before the heal.
const clientHold = 40 * time.Second

// TestChaosPartitionShort makes each of the three partitions once, on the
// cluster of scripts/netns-cluster.sh (a node per network namespace), under
// load with a quorum source and at-least-once rungs, healing each: the
// consumer's node cut off from everything, then the publisher's, then the
// source queue's leader's node cut off from its peers (clients still reach
// it) for twice the nodes' net tick. Any loss fails it. `make
// chaos-partition-short` starts the cluster and runs it.
func TestChaosPartitionShort(t *testing.T) { partitions(t, 3) }

// TestChaosPartition is the long run (`make chaos`): each partition three
// times.
func TestChaosPartition(t *testing.T) { partitions(t, 9) }

func partitions(t *testing.T, cuts int) {
	urls := strings.Fields(os.Getenv("ACEMQ_NETNS_URLS"))
	if len(urls) != 3 {
		t.Fatal("ACEMQ_NETNS_URLS must list the three nodes' AMQP URLs (make chaos-partition-short starts the cluster and sets it)")
	}
	mgmt := managementURLs(t, urls)
	bin := buildConsumer(t)
	name := brokertest.UniqueNameOn(t, "acemq.chaos", "/", mgmt...)
	tick := 10 * time.Second
	if s := os.Getenv("ACEMQ_NETNS_TICK"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ACEMQ_NETNS_TICK=%q: %v", s, err)
		}
		tick = time.Duration(n) * time.Second
	}
	series := envOr("ACEMQ_NETNS_SERIES", "3.10")
	runConfig(t, Config{
		URL: urls[0], Fallbacks: urls[1:], ConsumerURL: urls[2],
		Queue: name, QueueType: transport.Quorum, Policy: RungPolicy, Rungs: contract.AtLeastOnceRungs,
		Scenario: Partition, Faults: cuts, Rate: RungRate, Gap: 2 * time.Second, Quiet: 120 * time.Second,
		ConsumerBin: bin, Name: name,
		ManagementURL: mgmt[0], ManagementFallbacks: mgmt[1:],
		BrokerSettings: []string{"the nodes in network namespaces (scripts/netns-cluster.sh, RabbitMQ " + series + ")",
			fmt.Sprintf("net_ticktime=%v", tick), "dead_letter_worker_publisher_confirm_timeout=" + envOr("ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS", "180000 (default)")},
		BrokerLogs: strings.Fields(os.Getenv("ACEMQ_NETNS_LOGS")),
		Cut:        cutter(name, mgmt, tick),
	}, noLoss)
}

// cutter makes the partitions by turn: the consumer's node from everything,
// the publisher's node from everything, the leader's node from its peers.
func cutter(name string, mgmt []string, tick time.Duration) func(ctx context.Context, i int) (Cut, error) {
	return func(ctx context.Context, i int) (Cut, error) {
		consumer, err := connectionNode(ctx, mgmt, name+"-consumer")
		if err != nil {
			return Cut{}, err
		}
		// The node the harness publishes through: its publishing connection's.
		publisher, err := connectionNode(ctx, mgmt, rabbitmq.PublishingConnectionName(name+"-harness"))
		if err != nil {
			return Cut{}, err
		}
		leader, err := netns(ctx, "leader", name)
		if err != nil {
			return Cut{}, err
		}
		leader = strings.TrimSpace(leader)
		node, args, hold, from := consumer, []string{"--all"}, clientHold, "everything"
		switch i % 3 {
		case 1:
			node = publisher
		case 2:
			var peers []string
			for _, n := range strings.Fields(os.Getenv("ACEMQ_NETNS_NODES")) {
				if n != leader {
					peers = append(peers, n)
				}
			}
			node, args, hold, from = leader, []string{"--from", strings.Join(peers, ",")}, 2*tick, "its peers"
		}
		var whose []string
		for role, n := range map[string]string{"consumer's": consumer, "publisher's": publisher, "leader's": leader} {
			if n == node {
				whose = append(whose, role)
			}
		}
		slices.Sort(whose)
		if _, err := netns(ctx, append([]string{"cut", node}, args...)...); err != nil {
			return Cut{}, err
		}
		return Cut{
			What: fmt.Sprintf("%s (%s) from %s", node, strings.Join(whose, ", "), from),
			Hold: hold,
			Heal: func(ctx context.Context) (string, error) {
				out, err := netns(ctx, "heal")
				return strings.TrimSpace(out), err
			},
		}, nil
	}
}

// connectionNode is the node of the newest connection named name, as the
// first management API that answers lists it; a new connection shows there
// within the statistics interval (5s), so this waits up to 30s for it.
func connectionNode(ctx context.Context, mgmt []string, name string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		node, err := listedNode(ctx, mgmt, name)
		if node != "" || err != nil {
			return node, err
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the cluster listed no connection named %s within 30s", name)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// listedNode is the node of the newest connection named name that the first
// management API to answer lists ("" when it lists none).
func listedNode(ctx context.Context, mgmt []string, name string) (string, error) {
	var errs []error
	for _, base := range mgmt {
		var conns []struct {
			Name  string `json:"user_provided_name"`
			Node  string `json:"node"`
			Since int64  `json:"connected_at"`
		}
		if err := managementGet(ctx, base, "/api/connections?columns=user_provided_name,node,connected_at", &conns); err != nil {
			errs = append(errs, err)
			continue
		}
		node, since := "", int64(0)
		for _, c := range conns {
			if c.Name == name && c.Since >= since {
				node, since = c.Node, c.Since
			}
		}
		return node, nil
	}
	return "", fmt.Errorf("finding the node of connection %s: %v", name, errs)
}

// netns runs scripts/netns-cluster.sh with args.
func netns(ctx context.Context, args ...string) (string, error) {
	return script(ctx, "scripts/netns-cluster.sh", args...)
}
