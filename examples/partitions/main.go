// Command partitions is per-key ordering at work: orders of four
// customers spread over eight partitions by customer (package partition),
// two consumers each taking four partitions one message at a time, a
// failure retried in place, one that never succeeds dead-lettered while its
// customer's next orders follow, and a consumer group of three on a queue
// of tasks.
//
//	go run ./examples/partitions                  # memory://
//	go run ./examples/partitions -broker amqp://guest:guest@localhost:5672/
//
// Against a real broker it uses queues of its own, named for the run, and
// deletes them at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/examples/internal/example"
	"github.com/acemq-go/acemq/partition"
)

// Order is one customer's n-th order.
type Order struct {
	Customer string `json:"customer"`
	N        int    `json:"n"`
}

func main() { example.Main(run) }

func run(ctx context.Context, conn *acemq.Conn) error {
	// The set of this run's own: exchange orders.<run>, quorum queues
	// orders.<run>.p0 to .p7 (printed without the run).
	run := example.Suffix()
	shown := func(name string) string { return strings.ReplaceAll(name, "."+run, "") } // as printed
	set := partition.Set{Name: "orders." + run}
	if err := set.Declare(ctx, conn); err != nil {
		return err
	}
	var queues []string
	for _, q := range append(set.Queues(), "tasks."+run) {
		queues = append(queues, example.WithDeadLetters(q)...)
	}
	defer example.DeleteQueues(conn, queues...)
	customers := []string{"ana", "ben", "chloé", "dev"}
	for _, c := range customers {
		k, err := set.Of(c)
		if err != nil {
			return err
		}
		fmt.Printf("%s: partition %d of %d (FNV-1a %#08x)\n", c, k, set.Count(), partition.Hash(c))
	}

	// Two consumers, four partitions each. ben's 3rd order fails twice and
	// succeeds on its third attempt; dev's 2nd never does.
	var mu sync.Mutex
	handled := map[string][]string{}
	left := make(chan struct{}, 100)
	handle := func(_ context.Context, m acemq.Message[Order]) acemq.Decision {
		o := m.Body
		switch {
		case o.Customer == "dev" && o.N == 2:
			return acemq.Retry(errors.New("card declined"))
		case o.Customer == "ben" && o.N == 3 && m.Envelope.Attempt < 3:
			return acemq.Retry(fmt.Errorf("stock service busy (attempt %d)", m.Envelope.Attempt))
		}
		mu.Lock()
		handled[o.Customer] = append(handled[o.Customer], fmt.Sprintf("%d@%d", o.N, m.Envelope.Attempt))
		mu.Unlock()
		left <- struct{}{}
		return acemq.Accept()
	}
	var members []*partition.Consumers
	for member := range 2 {
		ks, err := set.Assigned(member, 2)
		if err != nil {
			return err
		}
		cs, err := partition.Consume(ctx, conn, set, handle, partition.Ordering{Partitions: ks, Policy: acemq.Fixed(3, 20*time.Millisecond)})
		if err != nil {
			return err
		}
		members = append(members, cs)
		fmt.Printf("consumer %d takes %s\n", member, shown(strings.Join(cs.Queues(), ", ")))
	}

	pub, err := partition.NewPublisher[Order](conn, set)
	if err != nil {
		return err
	}
	var batch []partition.Keyed[Order]
	for n := 1; n <= 5; n++ {
		for _, c := range customers {
			batch = append(batch, partition.Keyed[Order]{Key: c, Body: Order{Customer: c, N: n}})
		}
	}
	if err := pub.PublishBatch(ctx, batch); err != nil {
		return err
	}
	for range len(batch) - 1 {
		select {
		case <-left:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, cs := range members {
		if _, err := cs.Close(ctx); err != nil {
			return err
		}
	}
	fmt.Println("handled, per customer, order@attempt:")
	for _, c := range customers {
		fmt.Printf("  %s: %s\n", c, strings.Join(handled[c], " "))
	}
	k, err := set.Of("dev")
	if err != nil {
		return err
	}
	dlq := contract.DeadLetterQueue(set.Queue(k))
	d, ok, err := conn.Get(ctx, dlq)
	if err != nil || !ok {
		return fmt.Errorf("reading %s: %v, %t", dlq, err, ok)
	}
	_ = d.Ack()
	fmt.Printf("%s holds %s: %v\n", shown(dlq), d.Body, d.Headers[contract.HeaderError])

	// A consumer group: three consumers on one queue, tagged
	// acemq-<queue>-0 to -2; no order kept, each task handled once.
	tasks := "tasks." + run
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: tasks}}}).Apply(ctx, conn); err != nil {
		return err
	}
	var count sync.Map
	done := make(chan struct{}, 9)
	group, err := partition.ConsumeGroup(ctx, conn, tasks, 3, func(_ context.Context, m acemq.Message[Order]) acemq.Decision {
		if _, again := count.LoadOrStore(m.Body.N, true); !again {
			done <- struct{}{}
		}
		return acemq.Accept()
	})
	if err != nil {
		return err
	}
	state, err := conn.InspectQueue(ctx, tasks)
	if err != nil {
		return err
	}
	tags := []string{}
	for n := range 3 {
		tags = append(tags, shown(contract.GroupConsumerTag(tasks, n)))
	}
	fmt.Printf("group on tasks: %d consumers (%s)\n", state.Consumers, strings.Join(tags, ", "))
	taskPub, err := acemq.NewPublisher[Order](conn, "")
	if err != nil {
		return err
	}
	for n := range 9 {
		if err := taskPub.Publish(ctx, tasks, Order{Customer: "task", N: n}); err != nil {
			return err
		}
	}
	for range 9 {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if _, err := group.Close(ctx); err != nil {
		return err
	}
	var ns []int
	count.Range(func(k, _ any) bool { ns = append(ns, k.(int)); return true })
	slices.Sort(ns)
	fmt.Printf("group handled tasks %v, %d accepted\n", ns, group.Stats().Accepted)
	return nil
}
