package acemq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/retry"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// The broker-free hot paths, for bench/ (make bench) and for comparing a
// change: go test -run '^$' -bench . -benchmem

// benchItem is the benchmarks' message: its JSON is 256 bytes, as in bench/.
type benchItem struct {
	ID  string `json:"id"`
	Seq int    `json:"seq"`
	Pad string `json:"pad"`
}

func newBenchItem(seq int) benchItem {
	return benchItem{ID: fmt.Sprintf("m-%010d", seq), Seq: seq, Pad: strings.Repeat("x", 212)}
}

func benchEnvelope() Envelope {
	return Envelope{ContentType: "application/json", Headers: transport.Table{"tenant": "acme"}}.
		Complete("orders.new", time.UnixMilli(1_700_000_000_000))
}

func BenchmarkEnvelopeWrite(b *testing.B) {
	env := benchEnvelope()
	b.ReportAllocs()
	for b.Loop() {
		var m transport.Message
		if err := env.Write(&m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadEnvelope(b *testing.B) {
	var m transport.Message
	if err := benchEnvelope().Write(&m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if env := ReadEnvelope(m); env.Attempt != 1 {
			b.Fatalf("attempt %d", env.Attempt)
		}
	}
}

// BenchmarkSettle is the decision made for every delivery, for each of its
// common outcomes.
func BenchmarkSettle(b *testing.B) {
	policy := Exponential(5, time.Second, time.Minute).WaitInBrokerFrom(4 * time.Second) // 1s, 2s in the consumer; 4s, 8s on rungs
	ladder, err := retry.NewLadder("orders", policy, contract.ContractRungs)
	if err != nil {
		b.Fatal(err)
	}
	random := func() float64 { return 0.5 }
	failure := errors.New("boom")
	for _, c := range []struct {
		name string
		in   delivered
		want contract.Outcome
	}{
		{"accept", delivered{Source: "orders", Decision: Accept(), Attempt: 1}, contract.Accepted},
		{"retry-in-consumer", delivered{Source: "orders", Decision: Retry(failure), Attempt: 1}, contract.RetriedInConsumer},
		{"retry-on-rung", delivered{Source: "orders", Decision: Retry(failure), Attempt: 3}, contract.RetriedOnRung},
		{"dead-letter", delivered{Source: "orders", Decision: Retry(failure), Attempt: 5}, contract.DeadLettered},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s := settle(c.in, policy, ladder, random); s.Outcome != c.want {
					b.Fatalf("outcome %v, want %v", s.Outcome, c.want)
				}
			}
		})
	}
}

var benchBrokers atomic.Int64

// BenchmarkPublishConsumeMemory is one whole cycle on memory://: a confirmed
// publish, its delivery, decoding, the handler's Accept. One message is in
// flight at a time, so it is the cycle's latency, not a throughput.
func BenchmarkPublishConsumeMemory(b *testing.B) { publishConsumeMemory(b, acceptFirst) }

// BenchmarkPublishConsumeMemoryHandlerTimeout is the same cycle with a
// handler timeout (never reached): what its timer and context cost.
func BenchmarkPublishConsumeMemoryHandlerTimeout(b *testing.B) {
	publishConsumeMemory(b, acceptFirst, WithHandlerTimeout(time.Minute))
}

// acceptFirst accepts every delivery: handled.
func acceptFirst(Envelope) (Decision, bool) { return Accept(), true }

// publishConsumeMemory publishes one message at a time on memory:// and
// waits until decide says a delivery of it was handled.
func publishConsumeMemory(b *testing.B, decide func(Envelope) (d Decision, handled bool), opts ...ConsumeOption) {
	ctx := context.Background()
	tr, err := memory.Dial(ctx, fmt.Sprintf("memory://bench-%d", benchBrokers.Add(1)))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := New(tr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Transport().DeclareQueue(ctx, transport.Queue{Name: "orders", Type: transport.Classic, Durable: true}); err != nil {
		b.Fatal(err)
	}
	handled := make(chan struct{}, 1)
	c, err := Consume(ctx, conn, "orders", func(_ context.Context, m Message[benchItem]) Decision {
		d, done := decide(m.Envelope)
		if done {
			handled <- struct{}{}
		}
		return d
	}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if _, err := c.Close(ctx); err != nil {
			b.Error(err)
		}
	}()
	pub := mustPublisher[benchItem](b, conn, "")
	item := newBenchItem(1)
	b.ReportAllocs()
	for b.Loop() {
		if err := pub.Publish(ctx, "orders", item); err != nil {
			b.Fatal(err)
		}
		<-handled
	}
}

// tenantInterceptor adds a header: the cheapest interceptor that changes
// something, for the cost of a chain against none.
func tenantInterceptor(_ context.Context, m *Intercepted) error {
	m.Headers["tenant"] = "acme"
	return nil
}

var interceptorChains = []struct {
	name  string
	chain []Interceptor
}{{"no-interceptor", nil}, {"one-interceptor", []Interceptor{tenantInterceptor}}}

// BenchmarkPublishPrepare is what a publish does before it is sent: the
// body encoded, the envelope written, and the interceptors run, if any.
func BenchmarkPublishPrepare(b *testing.B) {
	ctx := context.Background()
	item := newBenchItem(1)
	for _, c := range interceptorChains {
		b.Run(c.name, func(b *testing.B) {
			p := &Publisher[benchItem]{codec: JSON, clock: transport.SystemClock, chain: c.chain}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := p.prepare(ctx, "orders", item, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHandleDelivery is what a consumer does with a delivery before
// it is settled: the interceptors, if any, the envelope read, the body
// decoded and the handler run.
func BenchmarkHandleDelivery(b *testing.B) {
	ctx := context.Background()
	p := &Publisher[benchItem]{codec: JSON, clock: transport.SystemClock}
	pub, _, err := p.prepare(ctx, "orders", newBenchItem(1), nil)
	if err != nil {
		b.Fatal(err)
	}
	d := transport.Delivery{Message: pub.Message, RoutingKey: "orders"}
	accept := func(context.Context, Message[benchItem]) Decision { return Accept() }
	now := time.Now()
	for _, c := range interceptorChains {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if in, _ := handleDelivery(ctx, "orders", JSON, c.chain, accept, d, now); in.Decision.verdict != accepted {
					b.Fatalf("decision %v", in.Decision)
				}
			}
		})
	}
}
