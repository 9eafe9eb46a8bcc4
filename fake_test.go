package acemq

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"testing"

	"github.com/acemq-go/acemq/transport"
)

// fakeTransport is a transport.Transport that records what is published and
// declared, answers every publish with confirm(p), and delivers what a test
// puts on its deliveries channel.
type fakeTransport struct {
	transport.Recorder
	mu         sync.Mutex
	published  []transport.Publishing
	confirm    func(p transport.Publishing) error // nil: confirm all; errNoAnswer: never answer
	deliveries chan transport.Delivery
	setups     int
	cancelOnce sync.Once
	cancelled  chan struct{} // closed by Cancel
	blocked    string        // the State's BlockedReason; "" is not blocked
	// down names queues whose declaration (and bindings) fail with NOT_FOUND,
	// as RabbitMQ answers for a classic queue whose cluster node is down.
	down map[string]bool
	// hung names queues whose declaration answers only once its context
	// ends: RabbitMQ 4.3 answers one of a classic queue whose cluster node
	// is down after 69s (NOT_FOUND ... due to timeout).
	hung map[string]bool
}

var errNoAnswer = errors.New("the fake broker never answers")

func newFake() *fakeTransport {
	return &fakeTransport{deliveries: make(chan transport.Delivery, 100), cancelled: make(chan struct{})}
}

func (f *fakeTransport) conn() *Conn {
	return &Conn{transport: f, url: "fake://", logger: slog.New(slog.DiscardHandler), clock: transport.SystemClock, observer: NopObserver{}}
}

func (f *fakeTransport) String() string { return "fake://" }

func (f *fakeTransport) Publish(ctx context.Context, p transport.Publishing) (*transport.Confirmation, error) {
	f.mu.Lock()
	f.published = append(f.published, p)
	answer := f.confirm
	f.mu.Unlock()
	conf, resolve := transport.NewConfirmation()
	var err error
	if answer != nil {
		err = answer(p)
	}
	if err != errNoAnswer {
		resolve(err)
	}
	return conf, nil
}

func (f *fakeTransport) publishes() []transport.Publishing {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]transport.Publishing(nil), f.published...)
}

func (f *fakeTransport) Consume(ctx context.Context, queue string, opts transport.ConsumeOptions) (transport.Subscription, error) {
	f.setups++
	if opts.Setup != nil {
		if err := opts.Setup(ctx, nodeDown{&f.Recorder, f.down, f.hung}); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *fakeTransport) Deliveries() iter.Seq[transport.Delivery] {
	return transport.FromChan(f.deliveries)
}

func (f *fakeTransport) Cancel(context.Context) error {
	f.cancelOnce.Do(func() {
		close(f.deliveries)
		close(f.cancelled)
	})
	return nil
}

// InspectQueue finds no queue: the fake broker holds none.
func (f *fakeTransport) InspectQueue(_ context.Context, queue string) (transport.QueueState, error) {
	return transport.QueueState{}, fmt.Errorf("inspect queue %s: %w", queue, transport.ErrNotFound)
}
func (f *fakeTransport) PurgeQueue(context.Context, string) (int, error)  { return 0, nil }
func (f *fakeTransport) DeleteQueue(context.Context, string) (int, error) { return 0, nil }
func (f *fakeTransport) Get(context.Context, string) (transport.Delivery, bool, error) {
	return transport.Delivery{}, false, nil
}
func (f *fakeTransport) Take(context.Context, string) (transport.Taker, error) {
	return nil, errors.New("not in the fake")
}
func (f *fakeTransport) Ping(context.Context) error { return nil }
func (f *fakeTransport) State() transport.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return transport.State{Connected: true, Connects: 1, Blocked: f.blocked != "", BlockedReason: f.blocked}
}
func (f *fakeTransport) Close() error { return nil }

func (f *fakeTransport) Notify(func(transport.Event)) {}

// nodeDown is a Declarer that refuses the queues named in down, and
// bindings to them, with NOT_FOUND, and answers no declaration of those
// named in hung until its context ends.
type nodeDown struct {
	*transport.Recorder
	down, hung map[string]bool
}

func (d nodeDown) DeclareQueue(ctx context.Context, q transport.Queue) error {
	if d.hung[q.Name] {
		<-ctx.Done()
		return context.Cause(ctx)
	}
	if d.down[q.Name] {
		return fmt.Errorf("NOT_FOUND - home node of durable queue '%s' is down or inaccessible: %w", q.Name, transport.ErrNotFound)
	}
	return d.Recorder.DeclareQueue(ctx, q)
}

func (d nodeDown) Bind(ctx context.Context, b transport.Binding) error {
	if d.down[b.Queue] {
		return fmt.Errorf("NOT_FOUND - no queue '%s': %w", b.Queue, transport.ErrNotFound)
	}
	return d.Recorder.Bind(ctx, b)
}

// fakeSettler reports how its delivery was settled on settled.
type fakeSettler struct {
	id      string
	settled chan string
}

func (s fakeSettler) Ack() error { s.settled <- s.id + " ack"; return nil }
func (s fakeSettler) Nack(requeue bool) error {
	s.settled <- fmt.Sprintf("%s nack requeue=%v", s.id, requeue)
	return nil
}
func (s fakeSettler) Reject(requeue bool) error {
	s.settled <- fmt.Sprintf("%s reject requeue=%v", s.id, requeue)
	return nil
}

// deliver puts a message with id and body on the fake's queue; its
// settlement is reported on settled.
func (f *fakeTransport) deliver(id, body string, headers transport.Table, settled chan string) {
	f.deliveries <- transport.Delivery{
		Message: transport.Message{MessageID: id, ContentType: "application/json", Headers: headers, Body: []byte(body)},
		Settler: fakeSettler{id: id, settled: settled},
	}
}

// mustPublisher is NewPublisher, failing the test on an error.
func mustPublisher[T any](t testing.TB, c *Conn, exchange string, opts ...PublisherOption) *Publisher[T] {
	t.Helper()
	p, err := NewPublisher[T](c, exchange, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
