package claimcheck_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
)

// broker is where an end-to-end test runs: memory:// on a manual clock, or
// the RabbitMQ of ACEMQ_TEST_URL.
type broker struct {
	conn *acemq.Conn
	// queue is a source queue with its Q.dlq and Q.parked, declared.
	queue string
	// passWait lets a consumer's wait of d pass: the manual clock is moved
	// once the wait is held; RabbitMQ's time passes by itself.
	passWait func(t *testing.T, c *acemq.Consumer, d time.Duration)
}

func eachBroker(t *testing.T, test func(t *testing.T, b broker)) {
	t.Run("memory", func(t *testing.T) {
		mb := acemqtest.NewBroker(t)
		b := broker{conn: mb.Connect(t), queue: "invoices",
			passWait: func(t *testing.T, c *acemq.Consumer, d time.Duration) {
				acemqtest.WaitFor(t, c, "the wait in the consumer", func(s acemq.Stats) bool { return s.Waiting == 1 })
				mb.Advance(d)
			}}
		declare(t, b)
		test(t, b)
	})
	t.Run("rabbitmq", func(t *testing.T) {
		url := brokertest.URL(t)
		conn := conntest.Connect(t, url, t.Name())
		b := broker{conn: conn, queue: brokertest.UniqueName(t, "claimcheck"),
			passWait: func(*testing.T, *acemq.Consumer, time.Duration) {}}
		declare(t, b)
		test(t, b)
	})
}

// declare declares b's queue with its dead-letter half, deleted when the
// test ends.
func declare(t *testing.T, b broker) {
	t.Helper()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: b.queue, DeadLetter: true}}}
	if err := topology.Apply(t.Context(), b.conn); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{b.queue, contract.DeadLetterQueue(b.queue), contract.ParkedQueue(b.queue)} {
		t.Cleanup(func() { _, _ = b.conn.Transport().DeleteQueue(context.Background(), q) })
	}
}

type Invoice struct {
	ID   string `json:"id"`
	Scan string `json:"scan"` // the large part
}

// consume consumes b's queue into a channel, accepting every message.
func consume(t *testing.T, b broker, codec acemq.Codec, opts ...acemq.ConsumeOption) (*acemq.Consumer, <-chan acemq.Message[Invoice]) {
	t.Helper()
	got := make(chan acemq.Message[Invoice], 10)
	c, err := acemq.Consume(t.Context(), b.conn, b.queue, func(_ context.Context, m acemq.Message[Invoice]) acemq.Decision {
		got <- m
		return acemq.Accept()
	}, append([]acemq.ConsumeOption{acemq.WithCodec(codec)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Close(context.Background()) })
	return c, got
}

func publish(t *testing.T, b broker, codec acemq.Codec, inv Invoice) {
	t.Helper()
	p := acemqtest.NewPublisher[Invoice](t, b.conn, "", acemq.WithCodec(codec))
	if err := p.Publish(t.Context(), b.queue, inv); err != nil {
		t.Fatal(err)
	}
}

// scan is n bytes of text, different on every call.
func scan(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

// A 1 MiB body travels as its key: the broker carries a few dozen bytes,
// and the typed consumer gets the whole of it back, from a directory the
// publisher and the consumer share.
func TestLargeBodyThroughTheBroker(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		store := newDir(t, t.TempDir())
		codec := newCodec(t, acemq.JSON, store)
		sent := Invoice{ID: "inv-1", Scan: scan(1 << 20)}
		c, got := consume(t, b, codec)
		publish(t, b, codec, sent)
		acemqtest.WaitFor(t, c, "the accept", func(s acemq.Stats) bool { return s.Accepted == 1 })
		m := <-got
		if m.Body.ID != sent.ID || m.Body.Scan != sent.Scan {
			t.Errorf("received id %q and a scan of %d bytes; want %q and %d bytes, the same", m.Body.ID, len(m.Body.Scan), sent.ID, len(sent.Scan))
		}
		if len(m.Raw) != 3+36 || !strings.HasPrefix(string(m.Raw), "\xAC\x01\x01") {
			t.Errorf("the broker carried %d bytes (% x...); want 39, the framing and a UUID", len(m.Raw), m.Raw[:min(len(m.Raw), 8)])
		}
		if m.Envelope.ContentType != "application/json" || m.Envelope.Claim != "" {
			t.Errorf("content type %q, x-acemq-claim %q; want the inner codec's and none", m.Envelope.ContentType, m.Envelope.Claim)
		}
		if held := names(t, store.Path()); len(held) != 1 || held[0] != string(m.Raw[3:]) {
			t.Errorf("the store holds %v after the accept; want the payload still there (the codec never deletes)", held)
		}
	})
}

// A message whose payload is gone from the store is parked, the reason
// naming the key and the retention rule; the policy's retries are not used.
func TestGoneKeyIsParked(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		store := &flaky{}
		codec := newCodec(t, acemq.JSON, store, claimcheck.WithThreshold(0))
		publish(t, b, codec, Invoice{ID: "inv-2", Scan: "small"})
		// The store's retention ran out while the message waited.
		if err := store.Delete(t.Context(), store.lastKey.Load().(string)); err != nil || store.Len() != 0 {
			t.Fatalf("deleting the payload: %v; the store holds %d", err, store.Len())
		}
		c, _ := consume(t, b, codec, acemq.WithPolicy(acemq.Fixed(3, 0).WaitInBrokerFrom(0)))
		acemqtest.WaitFor(t, c, "the park", func(s acemq.Stats) bool { return s.Parked == 1 })
		if s := c.Stats(); s.RetriedInConsumer != 0 || s.Accepted != 0 {
			t.Errorf("stats %+v; want the message parked at once", s)
		}
		d, ok, err := b.conn.Transport().Get(t.Context(), contract.ParkedQueue(b.queue))
		if err != nil || !ok {
			t.Fatalf("reading %s: %v, %v", contract.ParkedQueue(b.queue), ok, err)
		}
		_ = d.Ack()
		reason, _ := d.Headers["x-acemq-error"].(string)
		if !strings.HasPrefix(reason, "could not be decoded: claimcheck: no payload under this key ") ||
			!strings.HasSuffix(reason, "; the store's retention must outlast every queue, dead-letter queue and replay") ||
			!strings.Contains(reason, store.lastKey.Load().(string)) || string(d.Body[3:]) != store.lastKey.Load().(string) {
			t.Errorf("parked with x-acemq-error %q; want the key and the retention rule", reason)
		}
	})
}

// flaky is a Memory store whose Get fails while down is above zero.
type flaky struct {
	claimcheck.Memory
	down    atomic.Int32
	gets    atomic.Int32
	lastKey atomic.Value // of Put
}

func (f *flaky) Put(ctx context.Context, payload []byte) (string, error) {
	key, err := f.Memory.Put(ctx, payload)
	f.lastKey.Store(key)
	return key, err
}

func (f *flaky) Get(ctx context.Context, key string) ([]byte, error) {
	f.gets.Add(1)
	if f.down.Add(-1) >= 0 {
		return nil, errors.New("dial tcp 10.0.0.9:9000: connect: connection refused")
	}
	return f.Memory.Get(ctx, key)
}

// A store out of reach is retried under the consumer's policy, and the
// message accepted once the store answers.
func TestUnreachableStoreIsRetried(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		store := &flaky{}
		codec := newCodec(t, acemq.JSON, store, claimcheck.WithThreshold(0))
		publish(t, b, codec, Invoice{ID: "inv-3", Scan: scan(100)})
		store.down.Store(1)
		c, got := consume(t, b, codec, acemq.WithPolicy(acemq.Fixed(3, 100*time.Millisecond).WaitInBrokerFrom(0)))
		b.passWait(t, c, 100*time.Millisecond)
		// The retried copy can be accepted before the original's ack is
		// counted: wait for both.
		acemqtest.WaitFor(t, c, "the retry and the accept", func(s acemq.Stats) bool { return s.RetriedInConsumer+s.Accepted >= 2 })
		if s := c.Stats(); s.RetriedInConsumer != 1 || s.Accepted != 1 || s.Parked != 0 || s.DeadLettered != 0 {
			t.Errorf("stats %+v; want one retry, then the accept", s)
		}
		m := <-got
		if m.Body.ID != "inv-3" || m.Envelope.Attempt != 2 || store.gets.Load() != 2 {
			t.Errorf("accepted %q on attempt %d after %d fetches; want inv-3 on attempt 2 after 2", m.Body.ID, m.Envelope.Attempt, store.gets.Load())
		}
	})
}
