package request_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/internal/testing/compiletest"
	"github.com/acemq-go/acemq/internal/testing/conntest"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/transport"
)

// broker is where a test runs: memory:// or the RabbitMQ of ACEMQ_TEST_URL,
// with a request queue (and its dead-letter half) declared.
type broker struct {
	conn  *acemq.Conn
	queue string
}

func eachBroker(t *testing.T, test func(t *testing.T, b broker), opts ...acemq.ConnOption) {
	t.Run("memory", func(t *testing.T) {
		b := broker{conn: acemqtest.NewBroker(t).Connect(t, opts...), queue: "quotes"}
		declare(t, b.conn, b.queue, true)
		test(t, b)
	})
	t.Run("rabbitmq", func(t *testing.T) {
		conn := conntest.Connect(t, brokertest.URL(t), t.Name(), opts...)
		b := broker{conn: conn, queue: brokertest.UniqueName(t, "request")}
		declare(t, b.conn, b.queue, true)
		test(t, b)
	})
}

// declare declares queue (with its dead-letter half), deleted when t ends.
func declare(t *testing.T, conn *acemq.Conn, queue string, deadLetter bool) {
	t.Helper()
	topology := acemq.Topology{Queues: []acemq.QueueSpec{{Name: queue, DeadLetter: deadLetter}}}
	if err := topology.Apply(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{queue, contract.DeadLetterQueue(queue), contract.ParkedQueue(queue)} {
		t.Cleanup(func() { _, _ = conn.DeleteQueue(context.Background(), q) })
	}
}

type Quote struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type Price struct {
	SKU   string `json:"sku"`
	Cents int    `json:"cents"`
}

func client(t *testing.T, b broker, opts ...request.ClientOption) *request.Client {
	t.Helper()
	c, err := request.NewClient(t.Context(), b.conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func serve[Req, Resp any](t *testing.T, b broker, h request.HandlerFunc[Req, Resp], opts ...request.ServeOption) *request.Responder {
	t.Helper()
	r, err := request.Serve(t.Context(), b.conn, b.queue, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = r.Close(context.Background()) })
	return r
}

func price(_ context.Context, m acemq.Message[Quote]) (Price, error) {
	return Price{SKU: m.Body.SKU, Cents: 250 * m.Body.Qty}, nil
}

func TestRoundTrip(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		r := serve(t, b, price)
		c := client(t, b)
		got, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "sku-1", Qty: 4})
		if err != nil {
			t.Fatal(err)
		}
		if want := (Price{SKU: "sku-1", Cents: 1000}); got != want {
			t.Fatalf("reply %+v, want %+v", got, want)
		}
		// The reply may arrive before the responder has settled its request.
		acemqtest.WaitFor(t, r.Consumer, "the request acked", func(s acemq.Stats) bool { return s.Accepted == 1 })
		if s := r.Replies(); s.Answered != 1 {
			t.Fatalf("responder counts %+v, want 1 answered", s)
		}
		if s := c.Stats(); s.Replies != 1 || s.Unmatched != 0 {
			t.Fatalf("client counts %+v, want 1 reply", s)
		}
		if !strings.HasPrefix(c.ReplyQueue(), contract.ReplyQueuePrefix) {
			t.Fatalf("reply queue %q, want the prefix %q", c.ReplyQueue(), contract.ReplyQueuePrefix)
		}
	})
}

// The request carries its reply address twice and one correlation id in
// every place a responder of the family looks.
func TestRequestOnTheWire(t *testing.T) {
	mb := acemqtest.NewBroker(t)
	conn := mb.Connect(t)
	declare(t, conn, "quotes", true)
	b := broker{conn: conn, queue: "quotes"}
	c := client(t, b)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := request.Do[Quote, Price](ctx, c, "", "quotes", Quote{SKU: "sku-1"}, acemq.WithMessageType("quote.requested"))
	if !errors.Is(err, acemq.ErrTimeout) {
		t.Fatalf("error %v, want a timeout", err)
	}
	msgs := mb.Messages(t, "quotes")
	if len(msgs) != 1 {
		t.Fatalf("%d requests in the queue, want 1", len(msgs))
	}
	e, h := msgs[0].Envelope, msgs[0].Headers
	if e.ReplyTo != c.ReplyQueue() || h[contract.HeaderReplyTo] != c.ReplyQueue() {
		t.Errorf("reply-to %q and %s %v, want both %q", e.ReplyTo, contract.HeaderReplyTo, h[contract.HeaderReplyTo], c.ReplyQueue())
	}
	if e.CorrelationID == "" || e.CorrelationID != e.Correlation || e.CorrelationID != e.ID {
		t.Errorf("correlation-id %q, x-acemq-correlation %q, message id %q: want one id", e.CorrelationID, e.Correlation, e.ID)
	}
	if e.Type != "quote.requested" {
		t.Errorf("type %q, want quote.requested", e.Type)
	}
	var re *request.Error
	if !errors.As(err, &re) || re.CorrelationID != e.CorrelationID {
		t.Errorf("error %v does not name the correlation id %s", err, e.CorrelationID)
	}
}

func TestResponderFailureReachesTheRequester(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		r := serve(t, b, func(context.Context, acemq.Message[Quote]) (Price, error) {
			return Price{}, errors.New("no price list for sku-9")
		})
		c := client(t, b)
		_, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "sku-9"})
		var re *request.ResponderError
		if !errors.As(err, &re) || re.Message != "no price list for sku-9" {
			t.Fatalf("error %v, want the responder's failure", err)
		}
		if !strings.Contains(err.Error(), "the responder failed: no price list for sku-9") {
			t.Fatalf("error %q does not name the failure", err)
		}
		acemqtest.WaitFor(t, r.Consumer, "the request dead-lettered", func(s acemq.Stats) bool { return s.DeadLettered == 1 })
		if s := r.Replies(); s.Failed != 1 {
			t.Fatalf("responder counts %+v, want 1 failed", s)
		}
	})
}

// A responder of another library writes its failure the same way (the
// acemq-error header), perhaps with a body: the requester reads the header
// whatever the body.
func TestForeignResponderFailureReachesTheRequester(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		c := client(t, b)
		requests := receive(t, b.conn, b.queue)
		go func() {
			d, ok := <-requests
			if !ok {
				return
			}
			_ = d.Ack()
			_, _ = publish(b.conn, d.ReplyTo, transport.Message{CorrelationID: d.CorrelationID, ContentType: contract.ContentTypeJSON,
				Headers: transport.Table{contract.HeaderReplyError: "price list unavailable"}, Body: []byte(`{"detail":"x"}`)})
		}()
		_, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "sku-9"})
		var re *request.ResponderError
		if !errors.As(err, &re) || re.Message != "price list unavailable" {
			t.Fatalf("error %v, want the responder's failure", err)
		}
	})
}

func TestTimeoutWithNoResponder(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		c := client(t, b)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := request.Do[Quote, Price](ctx, c, "", b.queue, Quote{SKU: "sku-1"})
		if !errors.Is(err, acemq.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want ErrTimeout and context.DeadlineExceeded", err)
		}
		if !strings.Contains(err.Error(), "the request may still be handled: resend it only if the responder is idempotent") {
			t.Fatalf("error %q does not say the request may still be handled, and resending is safe only with an idempotent responder", err)
		}
	})
}

func TestClientTimeoutBoundsAContextWithoutDeadline(t *testing.T) {
	b := broker{conn: acemqtest.NewBroker(t).Connect(t), queue: "quotes"}
	declare(t, b.conn, b.queue, true)
	c := client(t, b, request.WithTimeout(20*time.Millisecond))
	_, err := request.Do[Quote, Price](context.Background(), c, "", b.queue, Quote{})
	if !errors.Is(err, acemq.ErrTimeout) {
		t.Fatalf("error %v, want ErrTimeout", err)
	}
}

func TestUnroutableRequestFailsAtOnce(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		c := client(t, b)
		_, err := request.Do[Quote, Price](t.Context(), c, "", b.queue+"-nobody", Quote{})
		if !errors.Is(err, acemq.ErrUnroutable) {
			t.Fatalf("error %v, want ErrUnroutable", err)
		}
	})
}

func TestConcurrentRequestsMatchedByCorrelation(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		serve(t, b, price, request.WithConsumeOptions(acemq.WithConcurrency(4)))
		c := client(t, b)
		const n = 40
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				sku := fmt.Sprintf("sku-%d", i)
				got, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: sku, Qty: i})
				if err == nil && (got.SKU != sku || got.Cents != 250*i) {
					err = fmt.Errorf("request %s got %+v", sku, got)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		if s := c.Stats(); s.Replies != n || s.Unmatched != 0 {
			t.Fatalf("client counts %+v, want %d replies", s, n)
		}
	})
}

// receive takes queue's messages as they come, raw and unsettled, as
// another library's process would see them, until the test ends.
func receive(t *testing.T, conn *acemq.Conn, queue string) <-chan transport.Delivery {
	t.Helper()
	taker, err := conn.Take(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan transport.Delivery)
	done := make(chan struct{})
	t.Cleanup(func() { _ = taker.Close(); <-done })
	go func() {
		defer close(done)
		defer close(ch)
		for {
			d, ok, err := taker.Next(t.Context())
			if err != nil {
				return // the test ended
			}
			if !ok { // nothing ready: look again shortly
				select {
				case <-t.Context().Done():
					return
				case <-time.After(5 * time.Millisecond):
				}
				continue
			}
			select {
			case ch <- d:
			case <-t.Context().Done():
				return
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan transport.Delivery) transport.Delivery {
	t.Helper()
	select {
	case d := <-ch:
		_ = d.Ack()
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no reply within 10s")
	}
	panic("unreachable")
}

func publishRaw(t *testing.T, conn *acemq.Conn, queue string, m transport.Message) {
	t.Helper()
	if _, err := publish(conn, queue, m); err != nil {
		t.Fatal(err)
	}
}

// publish sends m to queue, confirmed, as a library of the family would.
func publish(conn *acemq.Conn, queue string, m transport.Message) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	confirm, err := conn.Publish(ctx, "", queue, m)
	if err == nil {
		err = confirm.Wait(ctx)
	}
	return err == nil, err
}

// Java and .NET requesters set only the AMQP properties: a Java one the
// correlation id, a .NET one the message id it matches replies by.
func TestRawRequestsAnswered(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		serve(t, b, price, request.WithReplyType("quote.priced"))
		replies := b.queue + "-raw-replies"
		declare(t, b.conn, replies, false)
		got := receive(t, b.conn, replies)
		for _, tt := range []struct {
			name                     string
			messageID, correlationID string
			want                     string
		}{
			{"java", "java-msg-1", "java-corr-1", "java-corr-1"},
			{"dotnet", "dotnet-msg-1", "", "dotnet-msg-1"},
		} {
			publishRaw(t, b.conn, b.queue, transport.Message{
				ContentType: contract.ContentTypeJSON, MessageID: tt.messageID, CorrelationID: tt.correlationID,
				ReplyTo: replies, Body: []byte(`{"sku":"sku-2","qty":2}`),
			})
			d := next(t, got)
			e := acemq.ReadEnvelope(d.Message)
			if d.CorrelationID != tt.want || e.Correlation != tt.want {
				t.Errorf("%s: reply correlation-id %q, x-acemq-correlation %q, want %q", tt.name, d.CorrelationID, e.Correlation, tt.want)
			}
			if e.Type != "quote.priced" || e.Causation != tt.messageID {
				t.Errorf("%s: reply type %q causation %q, want quote.priced and %s", tt.name, e.Type, e.Causation, tt.messageID)
			}
			if string(d.Body) != `{"sku":"sku-2","cents":500}` {
				t.Errorf("%s: reply body %s", tt.name, d.Body)
			}
		}
	})
}

// The header is read before the property.
func TestReplyAddressHeaderFirst(t *testing.T) {
	b := broker{conn: acemqtest.NewBroker(t).Connect(t), queue: "quotes"}
	declare(t, b.conn, b.queue, true)
	serve(t, b, price)
	declare(t, b.conn, "by-header", false)
	got := receive(t, b.conn, "by-header")
	publishRaw(t, b.conn, b.queue, transport.Message{
		ContentType: contract.ContentTypeJSON, MessageID: "m-1", CorrelationID: "c-1", ReplyTo: "nowhere",
		Headers: transport.Table{contract.HeaderReplyTo: "by-header"}, Body: []byte(`{"sku":"a","qty":1}`),
	})
	d := next(t, got)
	if d.CorrelationID != "c-1" || acemq.ReadEnvelope(d.Message).Type != contract.ReplyType {
		t.Fatalf("reply correlation-id %q type %q", d.CorrelationID, acemq.ReadEnvelope(d.Message).Type)
	}
}

func TestRequestWithoutReplyAddressDeadLettered(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		r := serve(t, b, price)
		publishRaw(t, b.conn, b.queue, transport.Message{ContentType: contract.ContentTypeJSON, MessageID: "m-1",
			Body: []byte(`{"sku":"a","qty":1}`)})
		acemqtest.WaitFor(t, r.Consumer, "the request dead-lettered", func(s acemq.Stats) bool { return s.DeadLettered == 1 })
		if s := r.Replies(); s.Unanswerable != 1 {
			t.Fatalf("responder counts %+v, want 1 unanswerable", s)
		}
		m, ok, err := b.conn.Get(t.Context(), contract.DeadLetterQueue(b.queue))
		if err != nil || !ok {
			t.Fatalf("no dead letter: %v", err)
		}
		_ = m.Ack()
		if why := acemq.ReadEnvelope(m.Message).Error; !strings.Contains(why, "no reply address") {
			t.Fatalf("dead letter says %q", why)
		}
	})
}

// A reply to no request waiting is acked, counted and logged; the one
// after it still reaches its request.
func TestUnknownReplyIgnored(t *testing.T) {
	eachBroker(t, func(t *testing.T, b broker) {
		serve(t, b, price)
		var logs syncBuffer
		c := client(t, b, request.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		publishRaw(t, b.conn, c.ReplyQueue(), transport.Message{ContentType: contract.ContentTypeJSON,
			CorrelationID: "nobody-asked", Body: []byte(`{}`)})
		// Replies are taken in order: this one's arriving proves the first
		// was taken.
		if _, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "a", Qty: 1}); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.Unmatched != 1 || s.Replies != 1 {
			t.Fatalf("client counts %+v, want 1 unmatched and 1 reply", s)
		}
		if !strings.Contains(logs.String(), "nobody-asked") {
			t.Fatalf("the log does not name the unknown correlation id:\n%s", logs.String())
		}
	})
}

func TestClosedClient(t *testing.T) {
	b := broker{conn: acemqtest.NewBroker(t).Connect(t), queue: "quotes"}
	declare(t, b.conn, b.queue, true)
	c := client(t, b)
	if err := c.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{}); !errors.Is(err, request.ErrClientClosed) {
		t.Fatalf("error %v, want ErrClientClosed", err)
	}
}

// NewClient and Serve each have their option type: one given the other's
// does not compile (they were run-time errors naming the option); WithCodec
// and WithLogger are both's.
func TestOptionScope(t *testing.T) {
	compiletest.Check(t, []string{"context", "time", "github.com/acemq-go/acemq", "github.com/acemq-go/acemq/request"},
		"ctx context.Context, c *acemq.Conn, h request.HandlerFunc[string, string]",
		[]compiletest.Case{
			{Code: `request.NewClient(ctx, c, request.WithReplyType("x"))`, Error: "does not implement request.ClientOption"},
			{Code: `request.NewClient(ctx, c, request.WithConsumeOptions())`, Error: "does not implement request.ClientOption"},
			{Code: `request.Serve(ctx, c, "q", h, request.WithTimeout(time.Second))`, Error: "does not implement request.ServeOption"},
			{Code: `request.NewClient(ctx, c, request.WithTimeout(time.Second), request.WithCodec(acemq.JSON), request.WithLogger(nil))`},
			{Code: `request.Serve(ctx, c, "q", h, request.WithReplyType("x"), request.WithCodec(acemq.JSON), request.WithLogger(nil))`},
		})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Requests and replies go through the Conn's publish interceptors (they
// are sent with Conn.Publish); the responder's consumer runs the Conn's
// consume interceptors, while the client reads its replies around them.
func TestInterceptorsOnRequestsAndReplies(t *testing.T) {
	var mu sync.Mutex
	var published, consumed []string
	stamp := func(_ context.Context, m *acemq.Intercepted) error {
		mu.Lock()
		defer mu.Unlock()
		published = append(published, m.RoutingKey)
		m.Headers["stamped"] = "yes"
		return nil
	}
	note := func(_ context.Context, m *acemq.Intercepted) error {
		mu.Lock()
		defer mu.Unlock()
		consumed = append(consumed, m.Queue)
		return nil
	}
	eachBroker(t, func(t *testing.T, b broker) {
		mu.Lock()
		published, consumed = nil, nil
		mu.Unlock()
		serve(t, b, func(ctx context.Context, m acemq.Message[Quote]) (Price, error) {
			if m.Envelope.Headers["stamped"] != "yes" {
				return Price{}, fmt.Errorf("the request came with the headers %v, not the interceptor's", m.Envelope.Headers)
			}
			return price(ctx, m)
		})
		c := client(t, b)
		if _, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "sku-1", Qty: 4}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []string{b.queue, c.ReplyQueue()}; !slices.Equal(published, want) {
			t.Errorf("the publish chain saw %v, want the request and the reply: %v", published, want)
		}
		if want := []string{b.queue}; !slices.Equal(consumed, want) {
			t.Errorf("the consume chain saw %v, want the request only: %v", consumed, want)
		}
	}, acemq.WithPublishInterceptors(stamp), acemq.WithConsumeInterceptors(note))
}
