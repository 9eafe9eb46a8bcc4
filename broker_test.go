package acemq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// These tests run on the RabbitMQ node of `make test` (they skip without one
// outside CI, and fail without one under CI=true).

type item struct {
	N    int    `json:"n"`
	Fail string `json:"fail,omitempty"` // how the handler fails it
}

// testQueue declares a fresh classic source queue, deleted (with its ladder
// and dead-letter queues) when the test ends.
func testQueue(t *testing.T, conn *acemq.Conn, policy acemq.RetryPolicy) string {
	t.Helper()
	q := brokertest.UniqueName(t, "acemq.test")
	ctx := context.Background()
	tr := conn.Transport()
	if err := tr.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteQueues(tr, q, policy) })
	return q
}

// deleteQueues deletes q, Q.dlq, Q.parked and the rungs of either kind that
// policy gives q.
func deleteQueues(tr transport.Transport, q string, policy acemq.RetryPolicy) {
	names := []string{q, contract.DeadLetterQueue(q), contract.ParkedQueue(q)}
	for _, kind := range []contract.RungKind{contract.ContractRungs, contract.AtLeastOnceRungs} {
		ladder, _ := retry.NewLadder(q, policy, kind)
		names = append(names, ladder.Queues()...)
	}
	for _, name := range names {
		_, _ = tr.DeleteQueue(context.Background(), name)
	}
}

func connect(t *testing.T, opts ...acemq.ConnectOption) *acemq.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := acemq.Connect(ctx, brokertest.URL(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if strings.Contains(conn.String(), ":guest@") {
		t.Fatalf("%s shows the password", conn)
	}
	return conn
}

// consume starts a consumer of q, closed when the test ends (a consumer the
// test closes itself is closed once).
func consume(t *testing.T, conn *acemq.Conn, q string, h acemq.Handler[item], opts ...acemq.ConsumeOption) *acemq.Consumer {
	t.Helper()
	c, err := acemq.Consume(context.Background(), conn, q, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	return c
}

// seen collects what a handler saw, so that tests can wait for a message.
type seen struct {
	mu   sync.Mutex
	msgs []acemq.Message[item]
	ch   chan acemq.Message[item]
}

func newSeen() *seen { return &seen{ch: make(chan acemq.Message[item], 1000)} }

func (s *seen) add(m acemq.Message[item]) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	s.ch <- m
}

func (s *seen) next(t *testing.T, within time.Duration) acemq.Message[item] {
	t.Helper()
	select {
	case m := <-s.ch:
		return m
	case <-time.After(within):
		t.Fatalf("no message within %s", within)
		return acemq.Message[item]{}
	}
}

// waitFor polls the broker-side condition until it holds or the deadline.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func depth(t *testing.T, conn *acemq.Conn, queue string) int {
	t.Helper()
	s, err := conn.Transport().InspectQueue(context.Background(), queue)
	if err != nil {
		t.Fatalf("inspecting %s: %v", queue, err)
	}
	return s.Messages
}

func publish(t *testing.T, conn *acemq.Conn, queue string, items ...item) {
	t.Helper()
	p := acemqtest.NewPublisher[item](t, conn, "")
	for _, it := range items {
		if err := p.Publish(context.Background(), queue, it, acemq.WithHeaders(transport.Table{"tenant": "acme"})); err != nil {
			t.Fatal(err)
		}
	}
}

// The ladder round trip, on either kind of rung: the failed message sits in
// its rung, not in the consumer's hands; a restart does not bring it back
// early; it comes home through acemq.retry with attempt 2 after the rung's
// TTL (5s: the restart, with the start's look for rungs of the other kind,
// must fit in it on a loaded machine).
func TestRungRoundTrip(t *testing.T) {
	for kind, rung := range map[contract.RungKind]string{contract.ContractRungs: ".retry.5s", contract.AtLeastOnceRungs: ".retry.quorum.5s"} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			rungRoundTrip(t, kind, rung)
		})
	}
}

func rungRoundTrip(t *testing.T, kind contract.RungKind, rungSuffix string) {
	conn := connect(t)
	policy := acemq.Fixed(3, 5*time.Second).WaitInBrokerFrom(time.Second)
	q := testQueue(t, conn, policy)
	rung := q + rungSuffix
	s := newSeen()
	handler := func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		s.add(m)
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("not yet"))
		}
		return acemq.Accept()
	}
	c := consume(t, conn, q, handler, acemq.WithPolicy(policy), acemq.WithRungs(kind))
	publish(t, conn, q, item{N: 1})
	if first := s.next(t, 10*time.Second); first.Envelope.Attempt != 1 {
		t.Fatalf("first delivery has attempt %d", first.Envelope.Attempt)
	}
	waitFor(t, "the message in its rung", 10*time.Second, func() bool { return depth(t, conn, rung) == 1 })
	waitFor(t, "the retry counted", 10*time.Second, func() bool { return c.Stats().RetriedOnRung == 1 })
	if st := c.Stats(); st.Waiting != 0 {
		t.Fatalf("stats %+v: the consumer holds the message", st)
	}

	// Restart the consumer while the message waits: it stays in the rung.
	if _, err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	c = consume(t, conn, q, handler, acemq.WithPolicy(policy), acemq.WithRungs(kind))
	if d := depth(t, conn, rung); d != 1 || len(s.ch) != 0 {
		t.Fatalf("after the restart the rung holds %d and the consumer saw %d; the wait was cut short", d, len(s.ch))
	}

	second := s.next(t, 15*time.Second)
	if second.Envelope.Attempt != 2 || second.Body.N != 1 || second.Envelope.Headers["tenant"] != "acme" {
		t.Fatalf("second delivery: attempt %d, body %+v, headers %v", second.Envelope.Attempt, second.Body, second.Envelope.Headers)
	}
	// It expired from the rung and was routed home by acemq.retry.
	deaths, _ := second.Envelope.Headers["x-death"].([]any)
	if len(deaths) == 0 || !strings.Contains(fmt.Sprint(deaths[0]), rung) || !strings.Contains(fmt.Sprint(deaths[0]), "expired") {
		t.Errorf("x-death %v, want an expiry from %s", second.Envelope.Headers["x-death"], rung)
	}
	waitFor(t, "the ack", 10*time.Second, func() bool { return c.Stats().Accepted == 1 })
}

// A queue shared by a Go consumer on at-least-once rungs and one on the
// contract's rungs (as another AceMQ library's would be): each declares and
// uses its own rungs, both kinds come home through acemq.retry, and every
// message is accepted on its second attempt.
func TestTwoKindsOfRungsShareAQueue(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	tr := conn.Transport()
	policy := acemq.Fixed(2, time.Second).WaitInBrokerFrom(time.Second)
	q := brokertest.UniqueName(t, "acemq.test")
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: q, DeadLetter: true}}}).Apply(ctx, conn); err != nil { // quorum
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteQueues(tr, q, policy) })
	var mu sync.Mutex
	accepted := map[int]int{}
	handler := func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("once"))
		}
		mu.Lock()
		accepted[m.Body.N]++
		mu.Unlock()
		return acemq.Accept()
	}
	// Prefetch 1: the broker deals the messages out between the two.
	quorum := consume(t, conn, q, handler, acemq.WithPolicy(policy), acemq.WithRungs(contract.AtLeastOnceRungs), acemq.WithPrefetch(1))
	classic := consume(t, conn, q, handler, acemq.WithPolicy(policy), acemq.WithRungs(contract.ContractRungs), acemq.WithPrefetch(1))
	const n = 40
	for i := range n {
		publish(t, conn, q, item{N: i})
	}
	waitFor(t, "every message accepted", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) == n
	})
	for name, c := range map[string]*acemq.Consumer{"at-least-once": quorum, "contract": classic} {
		if st := c.Stats(); st.RetriedOnRung == 0 {
			t.Errorf("the consumer on %s rungs retried nothing on its rungs: %+v", name, st)
		}
	}
	for _, rung := range []string{q + ".retry.quorum.1s", q + ".retry.1s"} {
		if d := depth(t, conn, rung); d != 0 {
			t.Errorf("%s holds %d", rung, d)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, times := range accepted {
		if times != 1 {
			t.Errorf("message %d accepted %d times", i, times)
		}
	}
}

// On RabbitMQ as on memory:// (rungkind_test.go): a consumer that chose no
// kind refuses to start beside the queue's contract rungs, and one that
// chose contract rungs starts on them.
func TestConsumeRefusesTheDefaultBesideContractRungs(t *testing.T) {
	conn := connect(t)
	policy := acemq.Fixed(2, time.Minute)
	q := brokertest.UniqueName(t, "acemq.test")
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: q, Retry: &policy, Rungs: contract.ContractRungs}}}
	if err := top.Apply(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteQueues(conn.Transport(), q, policy) })
	handler := func(context.Context, acemq.Message[item]) acemq.Decision { return acemq.Accept() }
	c, err := acemq.Consume(context.Background(), conn, q, handler, acemq.WithPolicy(policy))
	if err == nil {
		_, _ = c.Close(context.Background())
		t.Fatal("Consume started a second ladder beside the contract rungs")
	}
	if !errors.Is(err, acemq.ErrOtherRungKind) || !strings.Contains(err.Error(), q+".retry.1m (contract rungs)") {
		t.Errorf("err = %v, want ErrOtherRungKind naming %s.retry.1m", err, q)
	}
	if _, err := conn.Transport().InspectQueue(context.Background(), q+".retry.quorum.1m"); !errors.Is(err, acemq.ErrNotFound) {
		t.Errorf("the refused consumer declared its rung: %v", err)
	}
	consume(t, conn, q, handler, acemq.WithPolicy(policy), acemq.WithRungs(contract.ContractRungs))
}

// Below the threshold the consumer waits, and no rung queue exists.
func TestConsumerWaitsBelowTheThreshold(t *testing.T) {
	conn := connect(t)
	policy := acemq.Fixed(3, 50*time.Millisecond)
	q := testQueue(t, conn, policy)
	s := newSeen()
	c := consume(t, conn, q, func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		s.add(m)
		if m.Envelope.Attempt < 3 {
			return acemq.Retry(errors.New("not yet"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	publish(t, conn, q, item{N: 1})
	for want := 1; want <= 3; want++ {
		if m := s.next(t, 10*time.Second); m.Envelope.Attempt != want {
			t.Fatalf("delivery %d has attempt %d", want, m.Envelope.Attempt)
		}
	}
	waitFor(t, "two retries in the consumer and the ack", 10*time.Second, func() bool {
		return c.Stats() == acemq.Stats{Accepted: 1, RetriedInConsumer: 2}
	})
	for _, kind := range []contract.RungKind{contract.ContractRungs, contract.AtLeastOnceRungs} {
		if _, err := conn.Transport().InspectQueue(context.Background(), contract.RungQueue(q, 0, kind)); !errors.Is(err, acemq.ErrNotFound) {
			t.Errorf("a %s rung exists below the threshold: %v", kind, err)
		}
	}
}

// Every set-aside lands in its queue with the reason, and the original body,
// id, first-seen and application headers.
func TestSetAsides(t *testing.T) {
	conn := connect(t)
	policy := acemq.Fixed(2, 10*time.Millisecond)
	q := testQueue(t, conn, policy)
	consume(t, conn, q, func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		switch m.Body.Fail {
		case "retry":
			return acemq.Retry(errors.New("still failing"))
		case "fatal":
			return acemq.Retry(acemq.Fatal(errors.New("card declined")))
		case "reject":
			return acemq.Reject(errors.New("no such product"))
		case "panic":
			panic("handler bug")
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	publish(t, conn, q, item{N: 1, Fail: "retry"}, item{N: 2, Fail: "fatal"}, item{N: 3, Fail: "reject"}, item{N: 4, Fail: "panic"})
	raw := acemqtest.NewPublisher[[]byte](t, conn, "", acemq.WithCodec(jsonClaim{acemq.Bytes}))
	if err := raw.Publish(context.Background(), q, []byte("{not json"), acemq.WithMessageID("garbled"),
		acemq.WithHeaders(transport.Table{"tenant": "acme"})); err != nil {
		t.Fatal(err)
	}
	dlq, parked := contract.DeadLetterQueue(q), contract.ParkedQueue(q)
	waitFor(t, "four dead letters and one parked", 20*time.Second, func() bool {
		return depth(t, conn, dlq) == 4 && depth(t, conn, parked) == 1
	})
	reasons := map[string]string{}
	for _, queue := range []string{dlq, parked} {
		for {
			d, ok, err := conn.Transport().Get(context.Background(), queue)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			env := acemq.ReadEnvelope(d.Message)
			if env.ID == "" || env.FirstSeen.IsZero() || env.Headers["tenant"] != "acme" || d.ContentType != "application/json" {
				t.Errorf("%s: envelope %+v lost a value", queue, env)
			}
			reasons[queue+" "+string(d.Body)] = env.Error
			if err := d.Ack(); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]string{
		dlq + ` {"n":1,"fail":"retry"}`:  "exhausted 2 attempts: still failing",
		dlq + ` {"n":2,"fail":"fatal"}`:  "card declined",
		dlq + ` {"n":3,"fail":"reject"}`: "no such product",
		dlq + ` {"n":4,"fail":"panic"}`:  "handler panicked: handler bug",
		parked + ` {not json`:            "could not be decoded: ",
	}
	for k, w := range want {
		if got, ok := reasons[k]; !ok || !strings.HasPrefix(got, w) {
			t.Errorf("%s: reason %q, want %q", k, got, w)
		}
	}
}

// jsonClaim says its bytes are JSON, to publish what cannot be decoded.
type jsonClaim struct{ acemq.Codec }

func (jsonClaim) ContentType() string { return "application/json" }

// A rung deleted after the start makes the wait the consumer's, counted.
func TestMissingRungFallsBackToTheConsumer(t *testing.T) {
	conn := connect(t)
	policy := acemq.Fixed(2, time.Second).WaitInBrokerFrom(time.Second)
	q := testQueue(t, conn, policy)
	s := newSeen()
	c := consume(t, conn, q, func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		s.add(m)
		if m.Envelope.Attempt == 1 {
			return acemq.Retry(errors.New("not yet"))
		}
		return acemq.Accept()
	}, acemq.WithPolicy(policy))
	if _, err := conn.Transport().DeleteQueue(context.Background(), contract.RungQueue(q, time.Second, contract.DefaultRungKind)); err != nil {
		t.Fatal(err)
	}
	publish(t, conn, q, item{N: 1})
	s.next(t, 10*time.Second)
	if m := s.next(t, 10*time.Second); m.Envelope.Attempt != 2 {
		t.Fatalf("second delivery has attempt %d", m.Envelope.Attempt)
	}
	waitFor(t, "the missing rung counted, a consumer retry and the ack", 10*time.Second, func() bool {
		return c.Stats() == acemq.Stats{Accepted: 1, RetriedInConsumer: 1, RungMissing: 1}
	})
}

// A missing dead-letter queue leaves the message on the broker.
func TestMissingDeadLetterQueueKeepsTheMessage(t *testing.T) {
	conn := connect(t)
	q := testQueue(t, conn, acemq.NoRetry())
	c := consume(t, conn, q, func(context.Context, acemq.Message[item]) acemq.Decision {
		return acemq.Reject(errors.New("no"))
	})
	if _, err := conn.Transport().DeleteQueue(context.Background(), contract.DeadLetterQueue(q)); err != nil {
		t.Fatal(err)
	}
	publish(t, conn, q, item{N: 1})
	waitFor(t, "a failed set-aside", 10*time.Second, func() bool { return c.Stats().SetAsideFailed >= 1 })
	if _, err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the message back on its queue", 10*time.Second, func() bool { return depth(t, conn, q) == 1 })
	if st := c.Stats(); st.DeadLettered != 0 || st.Accepted != 0 {
		t.Errorf("stats %+v: the message was acknowledged", st)
	}
}

// A quorum queue counts every requeue towards its delivery limit, and
// RabbitMQ 4 gives every quorum queue one (20) that dead-letters the message
// itself, here towards the missing Q.dlq: it would be gone. A set-aside that
// fails puts the message back as a copy, whose count starts again, so it
// outlasts any number of failures: 30 of them, then Q.dlq is back and the
// message is in it, with its reason and nothing the broker added.
func TestFailedSetAsidesOutlastTheDeliveryLimit(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	tr := conn.Transport()
	q := brokertest.UniqueName(t, "acemq.test")
	top := acemq.Topology{Queues: []acemq.QueueSpec{{Name: q, DeadLetter: true}}} // quorum, dead-lettering to Q.dlq
	t.Cleanup(func() {
		for _, name := range []string{q, contract.DeadLetterQueue(q), contract.ParkedQueue(q)} {
			_, _ = tr.DeleteQueue(context.Background(), name)
		}
	})
	if err := top.Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	c := consume(t, conn, q, func(context.Context, acemq.Message[item]) acemq.Decision {
		return acemq.Reject(errors.New("no"))
	}, acemq.WithTestBackoff())
	if _, err := tr.DeleteQueue(ctx, contract.DeadLetterQueue(q)); err != nil {
		t.Fatal(err)
	}
	publish(t, conn, q, item{N: 1})
	waitFor(t, "30 failed set-asides", time.Minute, func() bool { return c.Stats().SetAsideFailed >= 30 })
	ladder, _ := retry.NewLadder(q, acemq.NoRetry(), contract.ContractRungs)
	if err := ladder.DeclareDeadLetters(ctx, tr); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the message set aside", 30*time.Second, func() bool { return c.Stats().DeadLettered == 1 })
	if _, err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d, ok, err := tr.Get(ctx, contract.DeadLetterQueue(q))
	if err != nil || !ok {
		t.Fatalf("Get from Q.dlq: %v, %v", ok, err)
	}
	env := acemq.ReadEnvelope(d.Message)
	if env.Error != "no" || env.Attempt != 1 || d.Headers["x-death"] != nil || d.Headers["tenant"] != "acme" {
		t.Errorf("in Q.dlq: error %q, attempt %d, headers %v; want the handler's reason, attempt 1, no x-death", env.Error, env.Attempt, d.Headers)
	}
	if st := c.Stats(); st.PutBack < 30 || st.Accepted != 0 {
		t.Errorf("stats %+v", st)
	}
	if n := depth(t, conn, q); n != 0 {
		t.Errorf("%s holds %d messages, want 0", q, n)
	}
}

// Two services declaring the same ladder agree; a different one is refused,
// naming the queue and the argument.
func TestSecondDeclaration(t *testing.T) {
	conn, other := connect(t), connect(t)
	policy := acemq.Fixed(2, time.Minute)
	q := testQueue(t, conn, policy)
	ladder, _ := retry.NewLadder(q, policy, contract.ContractRungs)
	if err := ladder.Declare(context.Background(), conn.Transport()); err != nil {
		t.Fatal(err)
	}
	if err := ladder.Declare(context.Background(), other.Transport()); err != nil {
		t.Fatalf("the same ladder declared again: %v", err)
	}
	clash := transport.Queue{Name: q + ".retry.1m", Type: transport.Classic, Durable: true, Arguments: transport.Table{
		"x-message-ttl": int64(61000), "x-dead-letter-exchange": contract.RetryExchange, "x-dead-letter-routing-key": q}}
	err := other.Transport().DeclareQueue(context.Background(), clash)
	if !errors.Is(err, acemq.ErrPreconditionFailed) || !strings.Contains(err.Error(), q+".retry.1m") || !strings.Contains(err.Error(), "x-message-ttl") {
		t.Errorf("a different declaration: %v; want PRECONDITION_FAILED naming the queue and x-message-ttl", err)
	}
}

// Closing mid-wait loses nothing and acknowledges nothing unhandled.
func TestCloseMidWait(t *testing.T) {
	conn := connect(t)
	policy := acemq.Fixed(2, time.Hour).WaitInBrokerFrom(0)
	q := testQueue(t, conn, policy)
	c := consume(t, conn, q, func(context.Context, acemq.Message[item]) acemq.Decision {
		return acemq.Retry(errors.New("later"))
	}, acemq.WithPolicy(policy))
	publish(t, conn, q, item{N: 1})
	waitFor(t, "the wait", 10*time.Second, func() bool { return c.Stats().Waiting == 1 })
	report, err := c.Close(context.Background())
	if err != nil || report.WaitsCutShort != 1 {
		t.Fatalf("Close = %+v, %v", report, err)
	}
	waitFor(t, "the message back on its queue", 10*time.Second, func() bool { return depth(t, conn, q) == 1 })
	d, ok, err := conn.Transport().Get(context.Background(), q)
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if env := acemq.ReadEnvelope(d.Message); env.Attempt != 1 {
		t.Errorf("the requeued message has attempt %d, want 1 (unchanged)", env.Attempt)
	}
	_ = d.Nack(true)
}

// After every connection is closed by force, consumption resumes by itself
// and every confirmed message is handled.
func TestRecovery(t *testing.T) {
	name := brokertest.UniqueName(t, "acemq-recovery")
	conn := connect(t, acemq.WithConnectionName(name))
	q := testQueue(t, conn, acemq.NoRetry())
	var mu sync.Mutex
	handled := map[int]bool{}
	consume(t, conn, q, func(_ context.Context, m acemq.Message[item]) acemq.Decision {
		mu.Lock()
		handled[m.Body.N] = true
		mu.Unlock()
		return acemq.Accept()
	}, acemq.WithConcurrency(4))
	p := acemqtest.NewPublisher[item](t, conn, "")
	confirmed := map[int]bool{}
	publish := func(n int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := p.Publish(ctx, q, item{N: n})
		if err == nil {
			confirmed[n] = true
		}
		return err
	}
	n := 0
	for ; n < 100; n++ {
		if err := publish(n); err != nil {
			t.Fatalf("publish %d before the close: %v", n, err)
		}
	}
	// This test's own, not other packages': the Conn's main connection and
	// its publishing one, as a network failure would.
	brokertest.CloseConnections(t, name, rabbitmq.PublishingConnectionName(name))
	// Until the Conn has reconnected, a publish may be lost with its
	// connection, and must then say so; none may fail another way.
	recovered := func() bool {
		h := conn.Health(context.Background())
		return h.Connected && h.Recoveries >= 1
	}
	deadline := time.Now().Add(60 * time.Second)
	for ; !recovered(); n++ {
		if time.Now().After(deadline) {
			t.Fatal("the Conn did not recover within 60s")
		}
		if err := publish(n); err != nil && !errors.Is(err, acemq.ErrNotConfirmed) {
			t.Fatalf("publish %d during the recovery: %v, want nil or ErrNotConfirmed", n, err)
		}
	}
	for end := n + 100; n < end; n++ {
		if err := publish(n); err != nil {
			t.Fatalf("publish %d after the recovery: %v", n, err)
		}
	}
	waitFor(t, "every confirmed message handled", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for n := range confirmed {
			if !handled[n] {
				return false
			}
		}
		return true
	})
}
