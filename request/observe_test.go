package request_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/request"
	"github.com/acemq-go/acemq/transport"
)

// observed writes down the publishes and deliveries a Conn's Observer is
// told of, and adds a trace header to each publish as acemqotel does.
type observed struct {
	acemq.NopObserver
	mu    sync.Mutex
	lines []string
}

func (o *observed) add(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, fmt.Sprintf(format, args...))
}

func (o *observed) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.lines)
}

func (o *observed) PublishStart(ctx context.Context, p *acemq.PublishInfo) context.Context {
	if p.Headers != nil {
		p.Headers["traceparent"] = "trace-of-" + p.Type
	}
	return ctx
}

func (o *observed) PublishEnd(ctx context.Context, p *acemq.PublishInfo, r acemq.PublishResult) {
	o.add("publish %q %s %s republish=%v error=%v", p.Exchange, p.Type, r.Outcome, p.Republish, r.Err != nil)
	if corr, ok := ctx.Value(requestKey{}).(string); ok && corr == p.Correlation {
		o.add("publish %s within its request", p.Type)
	}
}

// requestKey holds, in a request's context, its correlation id.
type requestKey struct{}

func (o *observed) RequestStart(ctx context.Context, r *acemq.RequestInfo) context.Context {
	o.add("request %q %s started", r.RoutingKey, r.Type)
	return context.WithValue(ctx, requestKey{}, r.CorrelationID)
}

func (o *observed) RequestEnd(ctx context.Context, r *acemq.RequestInfo, res acemq.RequestResult) {
	corr, _ := ctx.Value(requestKey{}).(string)
	o.add("request %q %s %s error=%v own context=%v", r.RoutingKey, r.Type, res.Outcome, res.Err != nil, corr == r.CorrelationID)
}

func (o *observed) DeliveryStart(ctx context.Context, d *acemq.DeliveryInfo) context.Context {
	o.add("delivery %s traceparent=%v", d.Type, d.Headers["traceparent"])
	return ctx
}

// Requests and replies are told to the Observer (the metrics, spans and
// logs of acemqprom and acemqotel) as the application's publishes, and the
// header the Observer adds to a request reaches its responder. A
// RequestObserver is told each request too, from before its publish (made
// in the request's context) to its end: answered, failed (the responder's
// failure, unroutable) or timed out.
func TestRequestsAndRepliesObserved(t *testing.T) {
	obs := &observed{}
	eachBroker(t, func(t *testing.T, b broker) {
		obs.mu.Lock()
		obs.lines = nil
		obs.mu.Unlock()
		r := serve(t, b, func(ctx context.Context, m acemq.Message[Quote]) (Price, error) {
			if m.Body.Qty == 0 {
				return Price{}, errors.New("no quantity")
			}
			return price(ctx, m)
		})
		c := client(t, b)
		if _, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "a", Qty: 1}, acemq.WithMessageType("quote")); err != nil {
			t.Fatal(err)
		}
		var re *request.ResponderError
		if _, err := request.Do[Quote, Price](t.Context(), c, "", b.queue, Quote{SKU: "b"}, acemq.WithMessageType("quote")); !errors.As(err, &re) {
			t.Fatalf("error %v, want the responder's failure", err)
		}
		if _, err := request.Do[Quote, Price](t.Context(), c, "", b.queue+"-nobody", Quote{}, acemq.WithMessageType("stray")); !errors.Is(err, acemq.ErrUnroutable) {
			t.Fatalf("error %v, want ErrUnroutable", err)
		}
		idle := b.queue + "-idle"
		declare(t, b.conn, idle, false)
		// Long enough for the confirm on a loaded machine (at 50ms it came
		// too late at times, and the publish was told timed_out).
		short, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := request.Do[Quote, Price](short, c, "", idle, Quote{}, acemq.WithMessageType("late")); !errors.Is(err, acemq.ErrTimeout) {
			t.Fatalf("error %v, want ErrTimeout", err)
		}
		// A reply's publish ends (and is told) before its request is settled.
		acemqtest.WaitFor(t, r.Consumer, "both requests settled", func(s acemq.Stats) bool { return s.Accepted == 1 && s.DeadLettered == 1 })

		got := obs.seen()
		want := []string{
			`delivery quote traceparent=trace-of-quote`,
			`publish "" Reply confirmed republish=false error=false`,
			`publish "" quote confirmed republish=false error=false`,
			`delivery quote traceparent=trace-of-quote`,
			`publish "" Reply confirmed republish=false error=false`,
			`publish "" quote confirmed republish=false error=false`,
			`publish "" stray unroutable republish=false error=true`,
			`publish "" late confirmed republish=false error=false`,
			`request "` + b.queue + `" quote started`,
			`publish quote within its request`,
			`request "` + b.queue + `" quote answered error=false own context=true`,
			`request "` + b.queue + `" quote started`,
			`publish quote within its request`,
			`request "` + b.queue + `" quote failed error=true own context=true`,
			`request "` + b.queue + `-nobody" stray started`,
			`publish stray within its request`,
			`request "` + b.queue + `-nobody" stray failed error=true own context=true`,
			`request "` + idle + `" late started`,
			`publish late within its request`,
			`request "` + idle + `" late timed_out error=true own context=true`,
		}
		// The two sides run at once: the order within is theirs.
		for _, w := range want {
			i := slices.Index(got, w)
			if i < 0 {
				t.Fatalf("the Observer was not told %q; it was told:\n%q", w, obs.seen())
			}
			got = slices.Delete(got, i, i+1)
		}
		// Only the dead-lettering of the failed request is left: a
		// republish (acemq's own), not the application's.
		for _, g := range got {
			if g != `publish "" quote confirmed republish=true error=false` {
				t.Errorf("the Observer was told %q besides", g)
			}
		}
	}, acemq.WithObserver(obs))
}

// The reply carries the Observer's header too: the requester's trace goes
// on through the responder.
func TestReplyCarriesTheObserversHeader(t *testing.T) {
	obs := &observed{}
	b := broker{conn: acemqtest.NewBroker(t).Connect(t, acemq.WithObserver(obs)), queue: "quotes"}
	declare(t, b.conn, b.queue, true)
	serve(t, b, price)
	replies := "raw-replies"
	declare(t, b.conn, replies, false)
	got := receive(t, b.conn, replies)
	publishRaw(t, b.conn, b.queue, transport.Message{ContentType: contract.ContentTypeJSON, MessageID: "m-1",
		ReplyTo: replies, Body: []byte(`{"sku":"a","qty":1}`)})
	d := next(t, got)
	if d.Headers["traceparent"] != "trace-of-"+contract.ReplyType {
		t.Fatalf("reply headers %v, want the Observer's traceparent", d.Headers)
	}
}
