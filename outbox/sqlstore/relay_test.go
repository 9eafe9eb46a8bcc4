package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/testclock"
	"github.com/acemq-go/acemq/outbox"
	"github.com/acemq-go/acemq/outbox/sqlstore"
	"github.com/acemq-go/acemq/outbox/sqlstore/sqlite"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
	"github.com/acemq-go/acemq/transport/rabbitmq"
)

// broker is where a relay test runs: memory:// or the RabbitMQ of
// ACEMQ_TEST_URL, with a queue of the test's own, and an outbox in a SQLite
// file on a clock the test moves.
type broker struct {
	dial  func(t *testing.T) transport.Transport // a new connection
	conn  *acemq.Conn
	queue string
	clock *testclock.Clock
	path  string
}

func eachBroker(t *testing.T, test func(t *testing.T, b *broker)) {
	t.Run("memory", func(t *testing.T) {
		mb := memory.NewBroker()
		run(t, func(*testing.T) transport.Transport { return mb.Connect() }, "outbox", test)
	})
	t.Run("rabbitmq", func(t *testing.T) {
		url := brokertest.URL(t)
		run(t, func(t *testing.T) transport.Transport {
			tr, err := rabbitmq.Dial(t.Context(), url, rabbitmq.Options{ConnectionName: t.Name()})
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}, brokertest.UniqueName(t, "outbox"), test)
	})
}

func run(t *testing.T, dial func(*testing.T) transport.Transport, queue string, test func(*testing.T, *broker)) {
	b := &broker{dial: dial, queue: queue, clock: testclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)),
		path: filepath.Join(t.TempDir(), "outbox.db")}
	b.conn = b.connect(t, nil)
	if err := (acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue}}}).Apply(t.Context(), b.conn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = b.conn.DeleteQueue(context.Background(), queue) })
	test(t, b)
}

// connect opens a Conn of its own, its publishes passed through wrap.
func (b *broker) connect(t *testing.T, wrap func(transport.Transport) transport.Transport) *acemq.Conn {
	tr := b.dial(t)
	if wrap != nil {
		tr = wrap(tr)
	}
	conn, err := acemq.New(tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// store opens the test's outbox, a pool of its own.
func (b *broker) store(t *testing.T) *sqlstore.Store {
	s, err := sqlite.Open(t.Context(), b.path, sqlstore.WithClock(b.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// write writes n records of the queue, numbered from first, one
// transaction each.
func (b *broker) write(t *testing.T, s *sqlstore.Store, first, n int) {
	t.Helper()
	for i := first; i < first+n; i++ {
		b.writeTo(t, s, "", b.queue, fmt.Sprint(i))
	}
}

func (b *broker) writeTo(t *testing.T, s *sqlstore.Store, exchange, key, body string) int64 {
	t.Helper()
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	id, err := s.Write(t.Context(), tx, outbox.Message{Exchange: exchange, RoutingKey: key, Body: body,
		Options: []acemq.MessageOption{acemq.WithMessageID("m-" + body)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return id
}

// drain takes every message of the queue, in order, and says their bodies.
func (b *broker) drain(t *testing.T) []string {
	t.Helper()
	var got []string
	for {
		d, ok, err := b.conn.Get(t.Context(), b.queue)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return got
		}
		if env := acemq.ReadEnvelope(d.Message); env.ID != "m-"+string(d.Body) || env.Attempt != 1 || d.ContentType != contract.ContentTypeText {
			t.Errorf("message %q arrived with envelope %+v", d.Body, env)
		}
		got = append(got, string(d.Body))
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
	}
}

func numbers(first, n int) []string {
	var out []string
	for i := first; i < first+n; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

func relay(t *testing.T, s outbox.Store, conn *acemq.Conn, opts ...outbox.Option) *outbox.Relay {
	t.Helper()
	r, err := outbox.NewRelay(s, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func once(t *testing.T, r *outbox.Relay, want outbox.Batch) {
	t.Helper()
	got, err := r.Once(t.Context())
	if err != nil || got != want {
		t.Fatalf("Once = %+v, %v; want %+v", got, err, want)
	}
}

func lag(t *testing.T, r *outbox.Relay, want outbox.Lag) {
	t.Helper()
	got, err := r.Lag(t.Context())
	if err != nil || got.Pending != want.Pending || got.GivenUp != want.GivenUp {
		t.Fatalf("Lag = %+v, %v; want %d pending, %d given up", got, err, want.Pending, want.GivenUp)
	}
}

// Records are published in id order, batch after batch, each marked.
func TestRelayPublishesInOrder(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		b.write(t, s, 0, 25)
		b.clock.Advance(3 * time.Second)
		r := relay(t, s, b.conn, outbox.WithBatchSize(10))
		l, err := r.Lag(t.Context())
		if err != nil || l.Pending != 25 || l.Oldest != 3*time.Second {
			t.Fatalf("lag before: %+v, %v", l, err)
		}
		once(t, r, outbox.Batch{Claimed: 10, Published: 10})
		once(t, r, outbox.Batch{Claimed: 10, Published: 10})
		once(t, r, outbox.Batch{Claimed: 5, Published: 5})
		once(t, r, outbox.Batch{})
		lag(t, r, outbox.Lag{})
		if got := b.drain(t); strings.Join(got, " ") != strings.Join(numbers(0, 25), " ") {
			t.Errorf("the queue got %v", got)
		}
		if st := r.Stats(); st.Published != 25 || st.Batches != 3 || st.Failed != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// A record for an exchange that does not exist fails, counted, its error
// kept, until it is given up; the records after it are published then.
func TestUnreachableExchangeIsCountedThenGivenUp(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		missing := b.queue + ".missing"
		bad := b.writeTo(t, s, missing, "k", "lost")
		r := relay(t, s, b.conn, outbox.WithMaxAttempts(3), outbox.WithRetryDelay(time.Second))
		for attempt := 1; attempt <= 3; attempt++ {
			once(t, r, outbox.Batch{Claimed: 1, Failed: 1})
			var attempts int
			var last string
			if err := s.DB().QueryRowContext(t.Context(), "SELECT attempts, last_error FROM "+s.Table()+" WHERE id = ?", bad).Scan(&attempts, &last); err != nil {
				t.Fatal(err)
			}
			if attempts != attempt || !strings.Contains(last, missing) || !strings.Contains(strings.ToLower(last), "not found") {
				t.Fatalf("after attempt %d: attempts %d, last_error %q", attempt, attempts, last)
			}
			once(t, r, outbox.Batch{}) // its retry delay
			b.clock.Advance(time.Second)
		}
		// Given up: the records after it are published without it.
		b.write(t, s, 1, 3)
		once(t, r, outbox.Batch{Claimed: 3, Published: 3})
		once(t, r, outbox.Batch{})
		lag(t, r, outbox.Lag{GivenUp: 1})
		if got := b.drain(t); strings.Join(got, " ") != "1 2 3" {
			t.Errorf("the queue got %v", got)
		}
		if st := r.Stats(); st.Failed != 3 {
			t.Errorf("stats %+v; want 3 counted failures", st)
		}
	})
}

// lostConfirms is a transport whose publishes reach the broker but whose
// confirms are lost, as when the connection drops after the broker took
// the message and before its confirm arrived.
type lostConfirms struct {
	transport.Transport
}

func (l lostConfirms) Publish(ctx context.Context, p transport.Publishing) (*transport.Confirmation, error) {
	c, err := l.Transport.Publish(ctx, p)
	if err != nil {
		return nil, err
	}
	lost, resolve := transport.NewConfirmation()
	go func() {
		if err := c.Wait(ctx); err != nil {
			resolve(err)
			return
		}
		resolve(fmt.Errorf("confirm lost: %w", transport.ErrNotConfirmed))
	}()
	return lost, nil
}

// A record whose confirm was lost is not marked, nor counted: it is
// offered again after the retry delay, and then it arrives twice, the one
// duplicate the outbox makes.
func TestLostConfirmIsNotMarked(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		b.write(t, s, 0, 3)
		lossy := b.connect(t, func(tr transport.Transport) transport.Transport { return lostConfirms{tr} })
		r := relay(t, s, lossy, outbox.WithRetryDelay(time.Second))
		once(t, r, outbox.Batch{Claimed: 3, Failed: 3})
		lag(t, r, outbox.Lag{Pending: 3})
		var attempts int
		var last string
		if err := s.DB().QueryRowContext(t.Context(), "SELECT MAX(attempts), MIN(last_error) FROM "+s.Table()+" WHERE published_at IS NULL").Scan(&attempts, &last); err != nil {
			t.Fatal(err)
		}
		if attempts != 0 || !strings.Contains(last, "confirm lost") {
			t.Errorf("attempts %d, last_error %q; want the failure kept, not counted", attempts, last)
		}
		if st := r.Stats(); st.Unanswered != 3 || st.Failed != 0 {
			t.Errorf("stats %+v", st)
		}
		once(t, r, outbox.Batch{}) // the retry delay
		b.clock.Advance(time.Second)
		good := relay(t, s, b.conn)
		once(t, good, outbox.Batch{Claimed: 3, Published: 3})
		if got := b.drain(t); strings.Join(got, " ") != "0 1 2 0 1 2" {
			t.Errorf("the queue got %v; want each twice", got)
		}
	})
}

// forgetful is a store whose marks fail: its relay "dies" between the
// confirm and the mark, as far as the table can tell.
type forgetful struct{ outbox.Store }

func (forgetful) Published(context.Context, []int64) error {
	return errors.New("the database went away")
}

// Two relays at once never publish a record twice; a record is published
// again only once the lease of a relay that did not mark it has ended.
func TestTwoRelays(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s1, s2 := b.store(t), b.store(t)
		b.write(t, s1, 0, 200)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		relays := []*outbox.Relay{
			relay(t, s1, b.conn, outbox.WithBatchSize(7), outbox.WithPollInterval(10*time.Millisecond)),
			relay(t, s2, b.connect(t, nil), outbox.WithBatchSize(7), outbox.WithPollInterval(10*time.Millisecond)),
		}
		for _, r := range relays {
			wg.Go(func() {
				if err := r.Run(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		waitLag(t, relays[0], 0)
		cancel()
		wg.Wait()
		got := b.drain(t)
		if strings.Join(sorted(got), " ") != strings.Join(sorted(numbers(0, 200)), " ") {
			t.Errorf("the queue got %d messages; want each of 200 once", len(got))
		}
		if a, c := relays[0].Stats().Published, relays[1].Stats().Published; a+c != 200 {
			t.Errorf("the relays published %d and %d", a, c)
		}

		// A relay that cannot mark what it published leaves it leased: the
		// other relay takes it only once the lease has ended.
		b.write(t, s1, 200, 3)
		dying := relay(t, forgetful{s1}, b.conn)
		if got, err := dying.Once(t.Context()); err == nil || got.Claimed != 3 {
			t.Fatalf("Once of a relay that cannot mark = %+v, %v", got, err)
		}
		other := relay(t, s2, b.conn)
		once(t, other, outbox.Batch{})
		b.clock.Advance(contract.OutboxLease - time.Millisecond)
		once(t, other, outbox.Batch{})
		b.clock.Advance(time.Millisecond)
		once(t, other, outbox.Batch{Claimed: 3, Published: 3})
		if got := b.drain(t); strings.Join(got, " ") != "200 201 202 200 201 202" {
			t.Errorf("the queue got %v; want the three unmarked twice", got)
		}
	})
}

// waitLag waits for r to see pending records left. It fails once nothing
// has been published for 30s: a slow machine is not a stuck relay.
func waitLag(t *testing.T, r *outbox.Relay, pending int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := int64(-1)
	for {
		l, err := r.Lag(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if l.Pending == pending {
			return
		}
		if l.Pending != last {
			last, deadline = l.Pending, time.Now().Add(30*time.Second)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d pending, none published for 30s", l.Pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// cancelling is a transport that cancels the relay's context on its nth
// publish: the relay is told to stop mid-batch.
type cancelling struct {
	transport.Transport
	n      int32
	count  *atomic.Int32
	cancel context.CancelFunc
}

func (c cancelling) Publish(ctx context.Context, p transport.Publishing) (*transport.Confirmation, error) {
	if c.count.Add(1) == c.n {
		c.cancel()
	}
	return c.Transport.Publish(ctx, p)
}

// A relay stopped mid-batch settles what it sent, marks it, and releases
// the rest at once; Run returns nil.
func TestStopMidBatch(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		b.write(t, s, 0, 10)
		ctx, cancel := context.WithCancel(t.Context())
		var count atomic.Int32
		conn := b.connect(t, func(tr transport.Transport) transport.Transport {
			return cancelling{Transport: tr, n: 3, count: &count, cancel: cancel}
		})
		r := relay(t, s, conn)
		got, err := r.Once(ctx)
		if err != nil || got != (outbox.Batch{Claimed: 10, Published: 3, Released: 7}) {
			t.Fatalf("Once = %+v, %v", got, err)
		}
		if err := r.Run(ctx); err != nil {
			t.Errorf("Run after the cancel = %v", err)
		}
		// Released, not leased: another relay takes them at once.
		once(t, relay(t, s, b.conn), outbox.Batch{Claimed: 7, Published: 7})
		if got := b.drain(t); strings.Join(got, " ") != strings.Join(numbers(0, 10), " ") {
			t.Errorf("the queue got %v", got)
		}
	})
}

// An ordered relay never publishes a record before the one ahead of it
// is confirmed: a failure holds the rest back until it is published.
func TestOrderedStopsAtAFailure(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		b.write(t, s, 0, 1)
		b.writeTo(t, s, "", b.queue+".nobody", "held")
		b.write(t, s, 1, 2)
		r := relay(t, s, b.conn, outbox.Ordered(), outbox.WithRetryDelay(time.Second))
		once(t, r, outbox.Batch{Claimed: 4, Published: 1, Failed: 1, Released: 2})
		once(t, r, outbox.Batch{})
		b.clock.Advance(time.Second)
		// Still unroutable: it holds the rest back again.
		once(t, r, outbox.Batch{Claimed: 3, Failed: 1, Released: 2})
		lag(t, r, outbox.Lag{Pending: 3})
		if got := b.drain(t); strings.Join(got, " ") != "0" {
			t.Errorf("the queue got %v; want only the record ahead of the failure", got)
		}
	})
}

// A row that cannot be read is counted as a failed publish, named in
// last_error, and given up after its attempts.
func TestBadRowIsCounted(t *testing.T) {
	eachBroker(t, func(t *testing.T, b *broker) {
		s := b.store(t)
		id := b.writeTo(t, s, "", b.queue, "bad")
		if _, err := s.DB().ExecContext(t.Context(), "UPDATE "+s.Table()+" SET headers = '[1]' WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
		r := relay(t, s, b.conn, outbox.WithMaxAttempts(1))
		once(t, r, outbox.Batch{Claimed: 1, Failed: 1})
		var last string
		if err := s.DB().QueryRowContext(t.Context(), "SELECT last_error FROM "+s.Table()+" WHERE id = ?", id).Scan(&last); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(last, "not an object") || !strings.Contains(last, fmt.Sprintf("record %d", id)) {
			t.Errorf("last_error %q", last)
		}
		lag(t, r, outbox.Lag{GivenUp: 1})
		if got := b.drain(t); len(got) != 0 {
			t.Errorf("the queue got %v", got)
		}
	})
}

func TestNewRelayRefuses(t *testing.T) {
	conn, err := acemq.New(memory.NewBroker().Connect())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := sqlite.Open(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := outbox.NewRelay(nil, conn); err == nil {
		t.Error("NewRelay took no store")
	}
	if _, err := outbox.NewRelay(s, nil); err == nil {
		t.Error("NewRelay took no connection")
	}
	for _, opt := range []outbox.Option{outbox.WithBatchSize(0), outbox.WithLease(0), outbox.WithMaxAttempts(-1),
		outbox.WithPollInterval(0), outbox.WithRetryDelay(0), outbox.WithName(""), outbox.WithName(strings.Repeat("x", 256)),
		outbox.WithLogger(nil), nil} {
		if _, err := outbox.NewRelay(s, conn, opt); err == nil {
			t.Errorf("NewRelay took a bad option")
		}
	}
	r, err := outbox.NewRelay(s, conn, outbox.WithName("relay-1"))
	if err != nil || r.Name() != "relay-1" {
		t.Fatalf("NewRelay = %v, %v", r, err)
	}
}
