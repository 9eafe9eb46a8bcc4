package partition_test

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/partition"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// fnv1a is FNV-1a 32 written out from the contract's parameters, to hold
// Hash to.
func fnv1a(key string) uint32 {
	h := uint32(contract.FNV1aOffset)
	for _, b := range []byte(key) {
		h ^= uint32(b)
		h *= contract.FNV1aPrime
	}
	return h
}

func keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("order-%d", i)
	}
	return ks
}

func TestHash(t *testing.T) {
	// FNV-1a's published test vectors, and keys of other scripts.
	for key, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968} {
		if got := partition.Hash(key); got != want {
			t.Errorf("Hash(%q) = %#x, want %#x", key, got, want)
		}
	}
	for _, key := range append(keys(10000), "grüße", "注文-7", "🙂") {
		if got, want := partition.Hash(key), fnv1a(key); got != want {
			t.Fatalf("Hash(%q) = %#x, want %#x", key, got, want)
		}
	}
}

func TestOf(t *testing.T) {
	// Pinned values: the partitions other libraries must agree with.
	for _, c := range []struct {
		key  string
		n    int
		want int
	}{
		{"a", 8, int(uint32(0xe40c292c) % 8)}, {"foobar", 8, int(uint32(0xbf9cf968) % 8)},
		{"foobar", 3, int(uint32(0xbf9cf968) % 3)}, {"", 1, 0}, {"", 7, int(uint32(0x811c9dc5) % 7)},
		{"a", 1 << 33, 0xe40c292c}, // a count above 2^32 is not truncated (to 0)
	} {
		if got, err := partition.Of(c.key, c.n); got != c.want || err != nil {
			t.Errorf("Of(%q, %d) = %d, %v; want %d", c.key, c.n, got, err, c.want)
		}
	}
	for _, n := range []int{0, -1} {
		if _, err := partition.Of("a", n); err == nil || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("Of(key, %d): %v, want an error saying the count must be at least 1", n, err)
		}
	}
	if _, err := (partition.Set{Name: "orders", Partitions: -2}).Of("a"); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("Of in a set of -2 partitions: %v, want an error saying the count must be at least 1", err)
	}
	if got, err := (partition.Set{Name: "orders"}).Of("a"); got != int(uint32(0xe40c292c)%8) || err != nil {
		t.Errorf("Of in a set of the default count: %d, %v; want the partition among 8", got, err)
	}
}

// The other libraries' reductions: Java's floorMod of the signed hash and
// .NET's (hash & 0x7fffffff) % n. Over many keys, each agrees with Of for
// every key exactly when n is a power of two, and disagrees for some key
// otherwise.
func TestReductionsAgreeForPowersOfTwo(t *testing.T) {
	java := func(h uint32, n int) int {
		r := int64(int32(h)) % int64(n)
		if r < 0 {
			r += int64(n)
		}
		return int(r)
	}
	dotnet := func(h uint32, n int) int { return int((h & 0x7fffffff) % uint32(n)) }
	ks := keys(20000)
	counts := []int{}
	for n := 1; n <= 100; n++ {
		counts = append(counts, n)
	}
	counts = append(counts, 128, 256, 1000, 1024, 4096, 1<<20)
	for _, n := range counts {
		javaDiffers, dotnetDiffers := 0, 0
		for _, k := range ks {
			h := partition.Hash(k)
			ours, err := partition.Of(k, n)
			if err != nil {
				t.Fatal(err)
			}
			if java(h, n) != ours {
				javaDiffers++
			}
			if dotnet(h, n) != ours {
				dotnetDiffers++
			}
		}
		power := bits.OnesCount(uint(n)) == 1
		if power != (javaDiffers == 0) || power != (dotnetDiffers == 0) {
			t.Errorf("n = %d (power of two: %t): Java's reduction differs for %d keys of %d, .NET's for %d", n, power, javaDiffers, len(ks), dotnetDiffers)
		}
	}
}

func TestSet(t *testing.T) {
	s := partition.Set{Name: "orders", Partitions: 3}
	plan, err := s.Topology().Plan()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range plan {
		switch d := d.(type) {
		case transport.Queue:
			if d.Type != transport.Quorum || !d.Durable || d.Arguments[contract.ArgSingleActiveConsumer] != true || len(d.Arguments) != 1 {
				t.Errorf("%s: %+v, want a durable quorum queue with only x-single-active-consumer", d.Name, d)
			}
			got = append(got, "queue "+d.Name)
		case transport.Exchange:
			if d.Type != transport.Direct || !d.Durable {
				t.Errorf("%+v, want a durable direct exchange", d)
			}
			got = append(got, "exchange "+d.Name)
		case transport.Binding:
			got = append(got, "bind "+d.Queue+" "+d.Exchange+" "+d.RoutingKey)
		}
	}
	want := "exchange orders, queue orders.p0, queue orders.p1, queue orders.p2, " +
		"bind orders.p0 orders p0, bind orders.p0 orders orders.0, bind orders.p1 orders p1, bind orders.p1 orders orders.1, bind orders.p2 orders p2, bind orders.p2 orders orders.2"
	if strings.Join(got, ", ") != want {
		t.Errorf("the plan is\n%s\nwant\n%s", strings.Join(got, ", "), want)
	}
	shared := partition.Set{Name: "orders", SharedActive: true}
	plan, _ = shared.Topology().Plan()
	queues := 0
	for _, d := range plan {
		if q, ok := d.(transport.Queue); ok {
			queues++
			if len(q.Arguments) != 0 {
				t.Errorf("a shared-active set declares %s with %v, want no arguments", q.Name, q.Arguments)
			}
		}
	}
	if queues != contract.DefaultPartitions {
		t.Errorf("the default set declares %d queues, want %d", queues, contract.DefaultPartitions)
	}
	if ks, err := (partition.Set{Name: "o"}).Assigned(1, 4); err != nil || fmt.Sprint(ks) != "[1 5]" {
		t.Errorf("Assigned(1, 4) of 8 = %v, %v; want [1 5]", ks, err)
	}
	for _, bad := range []struct {
		s    partition.Set
		want string
	}{{partition.Set{}, "no name"}, {partition.Set{Name: "o", Partitions: -1}, "-1 partitions"}} {
		if err := bad.s.Validate(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: Validate = %v, want %q", bad.s, err, bad.want)
		}
	}
	if _, err := (partition.Set{Name: "o"}).Assigned(4, 4); err == nil {
		t.Error("Assigned(4, 4) succeeded")
	}
}

// each runs test on memory:// and on the test broker. The memory broker
// keeps real time, as RabbitMQ does: a partition's retries wait in place
// on the Conn's clock.
func each(t *testing.T, test func(t *testing.T, conn *acemq.Conn, name string)) {
	t.Run("memory", func(t *testing.T) {
		b := memory.NewBroker()
		t.Cleanup(b.Close)
		conn, err := acemq.New(b.Connect())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		test(t, conn, "orders")
	})
	t.Run("rabbitmq", func(t *testing.T) {
		test(t, conntest.Connect(t, brokertest.URL(t), t.Name()), brokertest.UniqueName(t, "partition"))
	})
}

// declare declares s, its queues deleted when t ends.
func declare(t *testing.T, conn *acemq.Conn, s partition.Set) {
	t.Helper()
	if err := s.Declare(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	for _, q := range s.Queues() {
		for _, name := range []string{q, contract.DeadLetterQueue(q), contract.ParkedQueue(q)} {
			t.Cleanup(func() { _, _ = conn.DeleteQueue(context.Background(), name) })
		}
	}
}

type event struct {
	Key string `json:"key"`
	Seq int    `json:"seq"`
}

// Per-key order is kept over 8 partitions and 4 consumers, each taking two,
// with failures retried in place; a message that always fails is
// dead-lettered with the contract's reason, and its key goes on after it.
func TestOrderPerKey(t *testing.T) {
	each(t, func(t *testing.T, conn *acemq.Conn, name string) {
		s := partition.Set{Name: name, Partitions: 8}
		declare(t, conn, s)
		const nKeys, perKey, consumers = 16, 25, 4
		poison := event{Key: "k-3", Seq: 7}
		var (
			mu     sync.Mutex
			seen   = map[string][]int{}
			failed = map[event]int{}
			done   = make(chan struct{})
			total  int
		)
		handle := func(_ context.Context, m acemq.Message[event]) acemq.Decision {
			mu.Lock()
			defer mu.Unlock()
			e := m.Body
			if m.Envelope.Attempt != failed[e]+1 {
				t.Errorf("%+v: attempt %d after %d failures", e, m.Envelope.Attempt, failed[e])
			}
			if e == poison || e.Seq%5 == 0 && failed[e] < 2 {
				failed[e]++
				return acemq.Retry(errors.New("not yet"))
			}
			seen[e.Key] = append(seen[e.Key], e.Seq)
			if total++; total == nKeys*perKey-1 {
				close(done)
			}
			return acemq.Accept()
		}
		policy := acemq.Fixed(3, 5*time.Millisecond)
		var members []*partition.Consumers
		for m := range consumers {
			ks, err := s.Assigned(m, consumers)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := partition.Consume(t.Context(), conn, s, handle, partition.Ordering{Partitions: ks, Policy: policy})
			if err != nil {
				t.Fatal(err)
			}
			members = append(members, cs)
			t.Cleanup(func() { _, _ = cs.Close(context.Background()) })
		}
		pub, err := partition.NewPublisher[event](conn, s)
		if err != nil {
			t.Fatal(err)
		}
		for seq := range perKey {
			for k := range nKeys {
				if err := pub.Publish(t.Context(), fmt.Sprintf("k-%d", k), event{Key: fmt.Sprintf("k-%d", k), Seq: seq}); err != nil {
					t.Fatal(err)
				}
			}
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d messages handled in 30s", total, nKeys*perKey-1)
		}
		mu.Lock()
		for k := range nKeys {
			key := fmt.Sprintf("k-%d", k)
			want := []int{}
			for seq := range perKey {
				if (event{key, seq}) != poison {
					want = append(want, seq)
				}
			}
			if fmt.Sprint(seen[key]) != fmt.Sprint(want) {
				t.Errorf("%s was handled in the order %v, want %v", key, seen[key], want)
			}
		}
		if failed[poison] != 3 {
			t.Errorf("the poison message was tried %d times, want 3", failed[poison])
		}
		mu.Unlock()
		k, err := s.Of(poison.Key)
		if err != nil {
			t.Fatal(err)
		}
		dlq := contract.DeadLetterQueue(s.Queue(k))
		var d transport.Delivery
		deadline := time.Now().Add(10 * time.Second)
		for {
			var ok bool
			d, ok, err = conn.Get(t.Context(), dlq)
			if err != nil {
				t.Fatal(err)
			}
			if ok || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if reason := fmt.Sprint(d.Headers[contract.HeaderError]); reason != "exhausted 3 attempts: not yet" {
			t.Errorf("%s holds %q with the reason %q, want exhausted 3 attempts: not yet", dlq, d.Body, reason)
		} else {
			_ = d.Ack()
		}
		// A handler records its message before the consumer settles it and
		// counts the settlement: wait for the last settlement's count.
		var stats acemq.Stats
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			stats = acemq.Stats{}
			for _, cs := range members {
				st := cs.Stats()
				stats.Accepted += st.Accepted
				stats.DeadLettered += st.DeadLettered
				stats.RetriedInConsumer += st.RetriedInConsumer
			}
			if stats.Accepted+stats.DeadLettered >= nKeys*perKey || time.Now().After(deadline) {
				break
			}
		}
		if stats.Accepted != nKeys*perKey-1 || stats.DeadLettered != 1 || stats.RetriedInConsumer != 0 {
			t.Errorf("the consumers' counts are %+v; want %d accepted, 1 dead-lettered and nothing retried through the queue", stats, nKeys*perKey-1)
		}
	})
}

// With single-active-consumer, a second consumer of a partition waits: the
// first has every delivery.
func TestSingleActiveConsumer(t *testing.T) {
	each(t, func(t *testing.T, conn *acemq.Conn, name string) {
		s := partition.Set{Name: name, Partitions: 1}
		declare(t, conn, s)
		var mu sync.Mutex
		by := map[int]int{}
		got := make(chan struct{}, 100)
		for i := range 2 {
			cs, err := partition.Consume(t.Context(), conn, s, func(context.Context, acemq.Message[event]) acemq.Decision {
				mu.Lock()
				by[i]++
				mu.Unlock()
				got <- struct{}{}
				return acemq.Accept()
			}, partition.Ordering{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = cs.Close(context.Background()) })
		}
		pub, err := partition.NewPublisher[event](conn, s)
		if err != nil {
			t.Fatal(err)
		}
		for seq := range 20 {
			if err := pub.Publish(t.Context(), "k", event{Key: "k", Seq: seq}); err != nil {
				t.Fatal(err)
			}
		}
		for range 20 {
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("not every message handled within 10s")
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if by[0] != 20 || by[1] != 0 {
			t.Errorf("the first consumer handled %d, the second %d; want 20 and 0", by[0], by[1])
		}
	})
}

func TestConsumeGroup(t *testing.T) {
	each(t, func(t *testing.T, conn *acemq.Conn, name string) {
		top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: name}}}
		if err := top.Apply(t.Context(), conn); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{name, contract.DeadLetterQueue(name), contract.ParkedQueue(name)} {
			t.Cleanup(func() { _, _ = conn.DeleteQueue(context.Background(), q) })
		}
		var mu sync.Mutex
		handled := map[int]int{}
		all := make(chan struct{})
		g, err := partition.ConsumeGroup(t.Context(), conn, name, 3, func(_ context.Context, m acemq.Message[event]) acemq.Decision {
			mu.Lock()
			defer mu.Unlock()
			if handled[m.Body.Seq]++; len(handled) == 30 {
				close(all)
			}
			return acemq.Accept()
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = g.Close(context.Background()) })
		st, err := conn.InspectQueue(t.Context(), name)
		if err != nil || st.Consumers != 3 {
			t.Errorf("InspectQueue(%s) = %+v, %v; want 3 consumers", name, st, err)
		}
		if strings.HasSuffix(t.Name(), "/rabbitmq") { // memory:// has no management API
			wantTags(t, name, "acemq-"+name+"-0", "acemq-"+name+"-1", "acemq-"+name+"-2")
		}
		pub, err := acemq.NewPublisher[event](conn, "")
		if err != nil {
			t.Fatal(err)
		}
		for seq := range 30 {
			if err := pub.Publish(t.Context(), name, event{Seq: seq}); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			t.Fatal("not every message handled within 10s")
		}
		if _, err := partition.ConsumeGroup(t.Context(), conn, name, 0, func(context.Context, acemq.Message[event]) acemq.Decision { return acemq.Accept() }); err == nil {
			t.Error("a group of 0 members started")
		}
	})
}

// wantTags checks the consumer tags on queue through the test broker's
// management API, which lists a consumer once the broker has emitted its
// statistics (every few seconds).
func wantTags(t *testing.T, queue string, want ...string) {
	t.Helper()
	var got []string
	deadline := time.Now().Add(15 * time.Second)
	for {
		var q struct {
			Details []struct {
				Tag string `json:"consumer_tag"`
			} `json:"consumer_details"`
		}
		if err := brokertest.GetJSON(t.Context(), brokertest.ManagementURL(), "/api/queues/%2F/"+url.PathEscape(queue), &q); err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, d := range q.Details {
			got = append(got, d.Tag)
		}
		slices.Sort(got)
		if slices.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the consumers of %s are tagged %q, want %q", queue, got, want)
	}
}

// Consume starts a consumer per partition at once; when one cannot start
// (its queue is gone), it fails with that one's error and the others it
// started are closed: none is left consuming.
func TestConsumeFailingPartitionClosesTheOthers(t *testing.T) {
	each(t, func(t *testing.T, conn *acemq.Conn, name string) {
		s := partition.Set{Name: name, Partitions: 4}
		declare(t, conn, s)
		if _, err := conn.DeleteQueue(t.Context(), s.Queue(2)); err != nil {
			t.Fatal(err)
		}
		cs, err := partition.Consume(t.Context(), conn, s, func(context.Context, acemq.Message[event]) acemq.Decision { return acemq.Accept() }, partition.Ordering{})
		if err == nil {
			_, _ = cs.Close(context.Background())
			t.Fatal("Consume started with a partition's queue missing")
		}
		if !strings.Contains(err.Error(), s.Queue(2)) {
			t.Errorf("Consume: %v, want it to name %s", err, s.Queue(2))
		}
		for _, k := range []int{0, 1, 3} {
			if st, err := conn.InspectQueue(t.Context(), s.Queue(k)); err != nil || st.Consumers != 0 {
				t.Errorf("InspectQueue(%s) = %+v, %v; want no consumer left", s.Queue(k), st, err)
			}
		}
	})
}
