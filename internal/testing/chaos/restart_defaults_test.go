//go:build chaos

package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// defaultsPolicy sends every retry to a rung (a 1s wait, then 2s ones),
// for up to 40 attempts: the handler fails until the restart is over, and
// no message may run out of attempts before then.
const defaultsPolicy = "exponential(40, 1s, 2s).waitInBrokerFrom(1s)"

// defaultsMessages is how many confirmed messages the test publishes.
const defaultsMessages = 600

// TestChaosRestartDefaults is the independent restart test, written the
// way a user would: a quorum source queue, a consumer from acemq.Consume
// with a retry policy and no other option (so the default kind of rung),
// 600 confirmed messages whose handler fails until the broker has been
// restarted, so that every one travels the rungs; one clean restart, once
// a third or more are on them; then every confirmed message must be
// accepted. Unlike TestChaosRestart (continuous load, 3 restarts, a fifth of
// the messages ever reaching a rung, the harness's own consumer process
// with its rung kind always named), every message is at risk here, and
// only the library's defaults decide the rungs. It restarts the node this
// process's environment names: it needs CHAOS_RESTART=yes and a node of
// its own (make chaos-restart CHAOS_RESTART_TEST=TestChaosRestartDefaults).
func TestChaosRestartDefaults(t *testing.T) {
	mayRestart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	name := brokertest.UniqueName(t, "acemq.chaos")
	policy, err := acemq.ParsePolicy(defaultsPolicy)
	if err != nil {
		t.Fatal(err)
	}
	// Whichever kind the consumer declares: both ladders' names, to find
	// which one it was and to delete it afterwards.
	ladders := map[contract.RungKind][]string{}
	var all []string
	for _, k := range []contract.RungKind{contract.ContractRungs, contract.AtLeastOnceRungs} {
		l, err := retry.NewLadder(name, policy, k)
		if err != nil {
			t.Fatal(err)
		}
		ladders[k] = l.Queues()
		all = append(all, l.Queues()...)
	}
	brokertest.DeleteWhenDone(t, append(all, contract.DeadLetterQueue(name), contract.ParkedQueue(name))...)

	conn, err := acemq.Connect(ctx, brokertest.URL(t), acemq.WithConnectionName(name+"-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tr := conn.Transport()
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: name, Type: transport.Quorum, Durable: true}); err != nil {
		t.Fatal(err)
	}

	var (
		restarted atomic.Bool
		mu        sync.Mutex
		accepted  = map[int]int{}
	)
	handler := func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		if !restarted.Load() {
			return acemq.Retry(errors.New("failing until the broker has restarted"))
		}
		mu.Lock()
		accepted[m.Body.N]++
		mu.Unlock()
		return acemq.Accept()
	}
	consumer, err := acemq.Consume(ctx, conn, name, handler, acemq.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close(context.Background())

	kind := contract.RungKind("")
	for k, qs := range ladders {
		if _, err := tr.InspectQueue(ctx, qs[0]); err == nil {
			kind = k
		}
	}
	if kind == "" {
		t.Fatalf("the consumer declared neither ladder: %v", ladders)
	}
	t.Logf("on %s: quorum source; the consumer declared %s rungs: %v", brokerName(ctx, t), kind, ladders[kind])

	// 600 confirmed messages, in batches of 10 at the tester's rate.
	pub, err := acemq.NewPublisher[item](conn, "")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < defaultsMessages; n += 10 {
		out := make([]acemq.Outgoing[item], 10)
		for i := range out {
			out[i] = acemq.Outgoing[item]{RoutingKey: name, Body: item{N: n + i}}
		}
		if err := pub.PublishBatch(ctx, out); err != nil {
			t.Fatalf("publishing %d..%d (before any fault): %v", n, n+9, err)
		}
		time.Sleep(time.Second * 10 / RungRate)
	}

	// The restart matters only if messages are on the rungs when it comes:
	// it comes once a third of them are (or after 30s, if any are).
	onRungs := func() (int, error) {
		c := 0
		for _, q := range ladders[kind] {
			st, err := tr.InspectQueue(ctx, q)
			if err != nil {
				return 0, err
			}
			c += st.Messages
		}
		return c, nil
	}
	waitUntil := time.Now().Add(30 * time.Second)
	atStop := 0
	for atStop < defaultsMessages/3 && time.Now().Before(waitUntil) {
		time.Sleep(100 * time.Millisecond)
		if atStop, err = onRungs(); err != nil {
			t.Fatal(err)
		}
	}
	if atStop == 0 {
		t.Fatalf("no message on the rungs before the restart: the test would prove nothing (%+v)", consumer.Stats())
	}
	t0 := time.Now()
	if err := restartBroker(ctx); err != nil {
		t.Fatal(err)
	}
	restarted.Store(true)
	outage := time.Since(t0)
	t.Logf("%d confirmed, %d on the rungs as the node was stopped; stopped and started again in %v", defaultsMessages, atStop, outage.Round(100*time.Millisecond))

	// Every one comes home and is accepted. An at-least-once rung may hold
	// a dead letter (messages_dlx) for dead_letter_worker_publisher_confirm_timeout
	// (180s by default) before sending it again, so the wait goes on while
	// a rung holds one, or anything still moves; it ends when nothing has
	// for a minute, or after 10 minutes in all.
	settled := func() (missing []int, dups int) {
		mu.Lock()
		defer mu.Unlock()
		for n := range defaultsMessages {
			switch c := accepted[n]; {
			case c == 0:
				missing = append(missing, n)
			case c > 1:
				dups += c - 1
			}
		}
		return missing, dups
	}
	up := time.Now()
	lastMove, last := up, -1
	missing, dups := settled()
	for len(missing) > 0 && time.Since(lastMove) < time.Minute && time.Since(up) < 10*time.Minute {
		held, herr := heldDeadLetters(ctx, []string{brokertest.ManagementURL()}, ladders[kind])
		queued, qerr := onRungs()
		if herr != nil || qerr != nil || len(held) > 0 || queued > 0 || len(missing) != last {
			lastMove, last = time.Now(), len(missing)
		}
		time.Sleep(time.Second)
		missing, dups = settled()
	}
	// Whatever did not come home: still queued somewhere, or set aside
	// (the policy ran out), or lost.
	elsewhere := map[string]int{}
	for _, q := range append([]string{name, contract.DeadLetterQueue(name), contract.ParkedQueue(name)}, ladders[kind]...) {
		if st, err := tr.InspectQueue(ctx, q); err == nil && st.Messages > 0 {
			elsewhere[q] = st.Messages
		}
	}
	st := consumer.Stats()
	t.Logf("%d confirmed, %d accepted, %d lost, %d handled twice or more; %v after the node was up; retried on a rung %d times; elsewhere %v",
		defaultsMessages, defaultsMessages-len(missing), len(missing), dups, time.Since(up).Round(time.Second), st.RetriedOnRung, elsewhere)
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("%d of %d confirmed messages never came home with the default (%s) rungs (queued elsewhere: %v): %v",
			len(missing), defaultsMessages, kind, elsewhere, head(missing, 20))
	}
}

// item is the body of the test's messages.
type item struct {
	N int `json:"n"`
}

func head(ns []int, k int) string {
	if len(ns) <= k {
		return fmt.Sprint(ns)
	}
	return fmt.Sprintf("%v and %d more", ns[:k], len(ns)-k)
}

// brokerName is the node's product and version, for the log.
func brokerName(ctx context.Context, t *testing.T) string {
	name, err := brokerVersion(ctx, brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	return name
}
