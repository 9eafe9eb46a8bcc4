package rabbitmq

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/transporttest"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"amqp://guest:s3cret@localhost:5672/", "amqp://guest:xxxxx@localhost:5672/"},
		{"amqps://user@host/vhost", "amqps://user@host/vhost"},
		{"amqp://localhost/", "amqp://localhost/"},
		{"amqp://u:pa/ss@host/", "amqp://u:xxxxx@host/"}, // unescaped '/': net/url reads a port
		{"amqp://u:12/34@host/", "amqp://u:xxxxx@host/"}, // ... that parses
		{"amqp://u:p@ss?x#y@host:5672/", "amqp://u:xxxxx@host:5672/"},
		{"amqp://u:p ss@host/", "amqp://u:xxxxx@host/"},
		{"guest:pass@host:5672", "guest:xxxxx@host:5672"},
		{"amqp://u:p@host/v@h", "amqp://u:xxxxx@h"}, // hides too much, never too little
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTableConversion(t *testing.T) {
	t.Parallel()
	in := transport.Table{
		"n":      int64(7),
		"s":      "x",
		"nested": transport.Table{"k": int32(1), "list": []any{transport.Table{"deep": true}, "a"}},
	}
	got := fromAMQPTable(toAMQPTable(in))
	if !reflect.DeepEqual(got, in) {
		t.Errorf("round trip = %#v, want %#v", got, in)
	}
	if err := toAMQPTable(in).Validate(); err != nil {
		t.Errorf("amqp091 refuses the converted table: %v", err)
	}
}

func TestErrorsNeverHoldThePassword(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-Pa55"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, u := range []string{
		"amqp://guest:" + secret + "@" + addr + "/",
		"amqp://guest:" + secret + "/x@" + addr + "/", // unescaped: cannot be parsed
		"amqps://guest:" + secret + "@" + addr + ":99999/",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		tr, err := Dial(ctx, u, Options{})
		cancel()
		if err == nil {
			tr.Close()
			t.Fatalf("Dial(%s) succeeded", RedactURL(u))
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "Pa55") {
			t.Errorf("error shows the password: %v", err)
		}
		t.Logf("%v", err)
	}
}

func TestDeclare(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)

	ex := transport.Exchange{Name: brokertest.UniqueName(t, "x"), Type: transport.Topic, Durable: true}
	for range 2 {
		if err := tr.DeclareExchange(ctx, ex); err != nil {
			t.Fatalf("DeclareExchange: %v", err)
		}
	}
	ex.Type = transport.Direct
	if err := tr.DeclareExchange(ctx, ex); !errors.Is(err, transport.ErrPreconditionFailed) {
		t.Errorf("redeclaring a topic exchange as direct: %v, want ErrPreconditionFailed", err)
	}

	q := transport.Queue{Name: brokertest.UniqueName(t, "q"), Type: transport.Classic, Durable: true,
		Arguments: transport.Table{"x-message-ttl": int64(1000), "x-dead-letter-exchange": "acemq.retry"}}
	for range 2 {
		if err := tr.DeclareQueue(ctx, q); err != nil {
			t.Fatalf("DeclareQueue: %v", err)
		}
	}
	q.Arguments = transport.Table{"x-message-ttl": int64(2000), "x-dead-letter-exchange": "acemq.retry"}
	err := tr.DeclareQueue(ctx, q)
	if !errors.Is(err, transport.ErrPreconditionFailed) {
		t.Fatalf("redeclaring with another TTL: %v, want ErrPreconditionFailed", err)
	}
	if !strings.Contains(err.Error(), q.Name) || !strings.Contains(err.Error(), "x-message-ttl") {
		t.Errorf("the error does not name the queue and the argument: %v", err)
	}

	quorum := transport.Queue{Name: brokertest.UniqueName(t, "q"), Type: transport.Quorum, Durable: true}
	for range 2 {
		if err := tr.DeclareQueue(ctx, quorum); err != nil {
			t.Fatalf("DeclareQueue quorum: %v", err)
		}
	}
	classic := quorum
	classic.Type = transport.Classic
	if err := tr.DeclareQueue(ctx, classic); !errors.Is(err, transport.ErrPreconditionFailed) {
		t.Errorf("redeclaring a quorum queue as classic: %v, want ErrPreconditionFailed", err)
	}

	if err := tr.Bind(ctx, transport.Binding{Queue: quorum.Name, Exchange: ex.Name, RoutingKey: "a.*"}); err != nil {
		t.Errorf("Bind: %v", err)
	}
	err = tr.Bind(ctx, transport.Binding{Queue: quorum.Name, Exchange: brokertest.UniqueName(t, "missing"), RoutingKey: "a"})
	if !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("binding to a missing exchange: %v, want ErrNotFound", err)
	}

	_, err = tr.InspectQueue(ctx, brokertest.UniqueName(t, "missing"))
	if !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("inspecting a missing queue: %v, want ErrNotFound", err)
	}
	st, err := tr.InspectQueue(ctx, q.Name)
	if err != nil || st.Name != q.Name || st.Messages != 0 || st.Consumers != 0 {
		t.Errorf("InspectQueue = %+v, %v", st, err)
	}
}

func TestPublishConfirmedAndGet(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)

	msg := transport.Message{
		Headers: transport.Table{
			"x-acemq-attempt": int64(3),
			"x-acemq-type":    "order.created",
			"nested":          transport.Table{"k": int32(1)},
		},
		ContentType:   "application/json",
		MessageID:     "id-1",
		CorrelationID: "corr-1",
		ReplyTo:       "replies",
		Type:          "order.created",
		Timestamp:     time.Unix(1_700_000_000, 0),
		Persistent:    true,
		Body:          []byte(`{"n":1}`),
	}
	c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx); err != nil {
		t.Fatalf("confirmation: %v", err)
	}
	d, ok, err := tr.Get(ctx, q)
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	if d.RoutingKey != q || d.Redelivered {
		t.Errorf("delivery routing key %q redelivered %v", d.RoutingKey, d.Redelivered)
	}
	got := d.Message
	got.Timestamp = got.Timestamp.In(time.UTC)
	want := msg
	want.Timestamp = want.Timestamp.In(time.UTC)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("delivered\n  %#v\nwant\n  %#v", got, want)
	}
	if err := d.Ack(); err != nil {
		t.Errorf("Ack: %v", err)
	}
	if err := d.Ack(); err == nil {
		t.Errorf("a second Ack succeeded")
	}
	if _, ok, err := tr.Get(ctx, q); ok || err != nil {
		t.Errorf("Get on an empty queue = %v, %v", ok, err)
	}
}

func TestPublishUnroutable(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	key := brokertest.UniqueName(t, "nowhere")

	c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: key, Mandatory: true, Message: transport.Message{MessageID: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx); !errors.Is(err, transport.ErrUnroutable) {
		t.Errorf("mandatory publish to no queue: %v, want ErrUnroutable", err)
	}
	// Without mandatory the broker drops it and confirms.
	c, err = tr.Publish(ctx, transport.Publishing{RoutingKey: key, Message: transport.Message{MessageID: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx); err != nil {
		t.Errorf("non-mandatory publish to no queue: %v, want nil", err)
	}
	// A missing exchange closes the publishing channel: that publish fails,
	// and the next one goes out on a new channel.
	c, err = tr.Publish(ctx, transport.Publishing{Exchange: brokertest.UniqueName(t, "missing"), RoutingKey: "k", Mandatory: true})
	if err == nil {
		err = c.Wait(ctx)
	}
	if !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("publish to a missing exchange: %v, want ErrNotFound", err)
	}
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "after")
}

// Many publishes in flight at once on one channel, a third of them to a
// routing key no queue is bound under: each confirmation must say which.
func TestConcurrentPublishesMatchReturns(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	for _, ids := range []string{"unique", "none"} {
		t.Run(ids, func(t *testing.T) {
			ctx := testCtx(t)
			q := classicQueue(t, tr, nil)
			nowhere := brokertest.UniqueName(t, "nowhere")
			const n = 500
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					key, id := q, ""
					if i%3 == 0 {
						key = nowhere
					}
					if ids == "unique" {
						id = fmt.Sprintf("m-%d", i)
					}
					c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: key, Mandatory: true,
						Message: transport.Message{MessageID: id, Body: []byte{byte(i)}}})
					if err == nil {
						err = c.Wait(ctx)
					}
					errs[i] = err
				})
			}
			wg.Wait()
			routed := 0
			for i, err := range errs {
				switch {
				case i%3 == 0 && !errors.Is(err, transport.ErrUnroutable):
					t.Errorf("publish %d to no queue: %v, want ErrUnroutable", i, err)
				case i%3 != 0 && err != nil:
					t.Errorf("publish %d to %s: %v, want nil", i, q, err)
				case i%3 != 0:
					routed++
				}
			}
			st, err := tr.InspectQueue(ctx, q)
			if err != nil || st.Messages != routed {
				t.Errorf("queue holds %+v, %v; want %d messages", st, err, routed)
			}
		})
	}
}

func TestPrefetch(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	const prefetch = 3
	for i := range prefetch + 5 {
		publish(t, tr, q, fmt.Sprint(i))
	}
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: prefetch})
	if err != nil {
		t.Fatal(err)
	}
	var held []transport.Delivery
	for range prefetch {
		held = append(held, receive(t, ctx, s))
	}
	// With prefetch deliveries unsettled the broker keeps the rest ready.
	eventually(t, ctx, "5 ready messages", func() bool {
		st, err := tr.InspectQueue(ctx, q)
		return err == nil && st.Messages == 5 && st.Consumers == 1
	})
	select {
	case d := <-transporttest.Chan(s):
		t.Fatalf("delivery %s beyond the prefetch of %d", d.Body, prefetch)
	default:
	}
	// Settling one lets exactly one more in.
	if err := held[0].Ack(); err != nil {
		t.Fatal(err)
	}
	held = append(held[1:], receive(t, ctx, s))
	eventually(t, ctx, "4 ready messages", func() bool {
		st, err := tr.InspectQueue(ctx, q)
		return err == nil && st.Messages == 4
	})
	select {
	case d := <-transporttest.Chan(s):
		t.Fatalf("delivery %s beyond the prefetch of %d", d.Body, prefetch)
	default:
	}
	for _, d := range held {
		if err := d.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		if err := receive(t, ctx, s).Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-transporttest.Chan(s); ok {
		t.Error("a delivery after everything was acked")
	}
}

func TestSettle(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 10})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, tr, q, "a")

	d := receive(t, ctx, s)
	if d.Redelivered {
		t.Error("first delivery marked redelivered")
	}
	if err := d.Nack(true); err != nil {
		t.Fatal(err)
	}
	d = receive(t, ctx, s)
	if !d.Redelivered || string(d.Body) != "a" {
		t.Errorf("after nack(requeue): %q redelivered=%v", d.Body, d.Redelivered)
	}
	if err := d.Reject(true); err != nil {
		t.Fatal(err)
	}
	d = receive(t, ctx, s)
	if !d.Redelivered {
		t.Error("after reject(requeue): not redelivered")
	}
	if err := d.Reject(false); err != nil {
		t.Fatal(err)
	}
	if err := d.Ack(); err == nil {
		t.Error("acking a rejected delivery succeeded")
	}

	publish(t, tr, q, "b")
	d = receive(t, ctx, s)
	if err := d.Nack(false); err != nil { // no dead-letter exchange: dropped
		t.Fatal(err)
	}
	publish(t, tr, q, "c")
	d = receive(t, ctx, s)
	if string(d.Body) != "c" || d.Redelivered {
		t.Errorf("got %q redelivered=%v, want c, fresh", d.Body, d.Redelivered)
	}
	if err := d.Ack(); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	for d := range transporttest.Chan(s) {
		t.Errorf("unexpected delivery %q", d.Body)
	}
	st, err := tr.InspectQueue(ctx, q)
	if err != nil || st.Messages != 0 || st.Consumers != 0 {
		t.Errorf("queue after everything was settled: %+v, %v", st, err)
	}
}

// Cancel hands over what the broker sent before its cancel-ok; those can
// still be settled.
func TestCancelHandsOverBufferedDeliveries(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	for i := range 5 {
		publish(t, tr, q, fmt.Sprint(i))
	}
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 5})
	if err != nil {
		t.Fatal(err)
	}
	first := receive(t, ctx, s)
	eventually(t, ctx, "all 5 delivered", func() bool {
		st, err := tr.InspectQueue(ctx, q)
		return err == nil && st.Messages == 0
	})
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	got := []transport.Delivery{first}
	for d := range transporttest.Chan(s) {
		got = append(got, d)
	}
	if len(got) != 5 {
		t.Fatalf("%d deliveries handed over, want 5", len(got))
	}
	for _, d := range got {
		if err := d.Ack(); err != nil {
			t.Errorf("Ack after Cancel: %v", err)
		}
	}
	eventually(t, ctx, "no consumer and an empty queue", func() bool {
		st, err := tr.InspectQueue(ctx, q)
		return err == nil && st.Messages == 0 && st.Consumers == 0
	})
	if _, ok, _ := tr.Get(ctx, q); ok {
		t.Error("a message is left after acking everything")
	}
}

func TestGetPurgeDelete(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	for i := range 3 {
		publish(t, tr, q, fmt.Sprint(i))
	}
	d, ok, err := tr.Get(ctx, q)
	if err != nil || !ok || string(d.Body) != "0" {
		t.Fatalf("Get = %q, %v, %v", d.Body, ok, err)
	}
	if err := d.Nack(true); err != nil {
		t.Fatal(err)
	}
	if n, err := tr.PurgeQueue(ctx, q); err != nil || n != 3 {
		t.Errorf("PurgeQueue = %d, %v; want 3", n, err)
	}
	if _, ok, err := tr.Get(ctx, q); ok || err != nil {
		t.Errorf("Get after purge = %v, %v", ok, err)
	}
	publish(t, tr, q, "x")
	if n, err := tr.DeleteQueue(ctx, q); err != nil || n != 1 {
		t.Errorf("DeleteQueue = %d, %v; want 1", n, err)
	}
	if _, err := tr.InspectQueue(ctx, q); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("InspectQueue after delete: %v, want ErrNotFound", err)
	}
	if n, err := tr.DeleteQueue(ctx, q); err != nil || n != 0 {
		t.Errorf("DeleteQueue of a deleted queue = %d, %v; want 0, nil", n, err)
	}
	if _, _, err := tr.Get(ctx, q); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("Get from a deleted queue: %v, want ErrNotFound", err)
	}
	if _, err := tr.PurgeQueue(ctx, q); !errors.Is(err, transport.ErrNotFound) {
		t.Errorf("PurgeQueue of a deleted queue: %v, want ErrNotFound", err)
	}
}

func TestRecovery(t *testing.T) {
	t.Parallel()
	const secret = "wrong-secret-in-url"
	var logs logBuffer
	var credentials atomic.Int32
	name := brokertest.UniqueName(t, "conn")
	base := brokertest.URL(t)
	tr := dial(t, withUser(t, base, "nobody", secret), Options{
		ConnectionName: name,
		Logger:         logs.logger(),
		Credentials: func(context.Context) (string, string, error) {
			credentials.Add(1)
			u, err := url.Parse(base)
			if err != nil {
				return "", "", err
			}
			pass, _ := u.User.Password()
			return u.User.Username(), pass, nil
		},
	})
	ctx := testCtx(t)
	q := brokertest.UniqueName(t, "q")
	var setups atomic.Int32
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 10, Setup: func(ctx context.Context, d transport.Declarer) error {
		setups.Add(1)
		return d.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Quorum, Durable: true})
	}})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, tr, q, "before")
	before := receive(t, ctx, s)

	brokertest.CloseConnections(t, name)
	eventually(t, ctx, "the second connection", func() bool { return tr.State().Connects == 2 })
	if st := tr.State(); !st.Connected || st.LastError == nil || st.LastErrorAt.IsZero() || strings.Contains(st.LastError.Error(), secret) {
		t.Errorf("State after recovery: %+v, want connected, with the loss as LastError (no password)", st)
	}

	if err := before.Ack(); !errors.Is(err, transport.ErrStaleDelivery) {
		t.Errorf("Ack of a delivery from the lost channel: %v, want ErrStaleDelivery", err)
	}
	publish(t, tr, q, "after")
	got := map[string]bool{}
	for len(got) < 2 {
		d := receive(t, ctx, s)
		got[string(d.Body)] = d.Redelivered
		if err := d.Ack(); err != nil {
			t.Errorf("Ack after recovery: %v", err)
		}
	}
	if redelivered, ok := got["before"]; !ok || !redelivered {
		t.Errorf("the unacked delivery came back %v (redelivered %v)", ok, redelivered)
	}
	if n := setups.Load(); n != 2 {
		t.Errorf("Setup ran %d times, want 2", n)
	}
	if n := credentials.Load(); n != 3 {
		t.Errorf("Credentials asked %d times, want 3 (the main connection's two connects, the publishing connection's one)", n)
	}
	if err := s.Cancel(ctx); err != nil {
		t.Errorf("Cancel: %v", err)
	}
	if _, ok := <-transporttest.Chan(s); ok {
		t.Error("Deliveries still open after Cancel")
	}
	out := logs.String()
	for _, want := range []string{"connection lost", "connection recovered"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("log shows the password:\n%s", out)
	}
	if strings.Contains(tr.String(), secret) {
		t.Errorf("String() shows the password: %s", tr)
	}
}

// When the broker cancels a consumer (its queue was deleted), the
// subscription runs Setup and subscribes again on the same Deliveries.
func TestBrokerCancelResubscribes(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := brokertest.UniqueName(t, "q")
	var setups atomic.Int32
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Setup: func(ctx context.Context, d transport.Declarer) error {
		setups.Add(1)
		return d.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Classic, Durable: true})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.DeleteQueue(ctx, q); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the queue declared again, with its consumer", func() bool {
		st, err := tr.InspectQueue(ctx, q)
		return err == nil && st.Consumers == 1
	})
	publish(t, tr, q, "x")
	if d := receive(t, ctx, s); string(d.Body) != "x" {
		t.Errorf("got %q", d.Body)
	}
	if n := setups.Load(); n != 2 {
		t.Errorf("Setup ran %d times, want 2", n)
	}
	// Before the cleanup deletes the queue, or Setup would declare it again.
	if err := s.Cancel(ctx); err != nil {
		t.Error(err)
	}
}

// A publish whose confirm never came back must not look confirmed when the
// connection goes.
func TestInFlightPublishesFailOnConnectionLoss(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil)
	tr := dial(t, p.url(t, "amqp"), Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "opens the publishing channel")

	p.dropFromBroker()
	var confs []*transport.Confirmation
	for i := range 50 {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte{byte(i)}}})
		if err != nil {
			t.Fatal(err)
		}
		confs = append(confs, c)
	}
	p.closeConns()
	for i, c := range confs {
		if err := c.Wait(ctx); !errors.Is(err, ErrNotConfirmed) {
			t.Errorf("publish %d in flight at the loss: %v, want ErrNotConfirmed", i, err)
		}
	}
	publish(t, tr, q, "on the next connection")
}

// The Transport is the one owner of reconnection: amqp091's own automatic
// recovery (amqp.Config.Recovery, off while nil) stays off on each
// connection it dials, so a lost connection stays closed in amqp091 (its
// NotifyClose, which the Transport watches, fires) and only the Transport
// connects again, once.
func TestAMQP091RecoveryStaysOff(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil)
	tr := dial(t, p.url(t, "amqp"), Options{})
	ctx := testCtx(t)
	current := func() *amqp.Connection {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.main.conn
	}
	first := current()
	if first.IsRecoveryEnabled() {
		t.Fatal("amqp091's automatic recovery is on for the Transport's connection")
	}
	p.closeConns()
	eventually(t, ctx, "amqp091 to close the lost connection", first.IsClosed)
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "on the next connection")
	second := current()
	switch {
	case second == nil || second == first:
		t.Fatalf("the Transport's connection is %p after the loss, was %p", second, first)
	case second.IsRecoveryEnabled():
		t.Error("amqp091's automatic recovery is on for the redialled connection")
	case !first.IsClosed():
		t.Error("amqp091 revived the lost connection")
	}
	tr.mu.Lock()
	publishing := tr.publishing.conn
	tr.mu.Unlock()
	if publishing == nil || publishing.IsRecoveryEnabled() {
		t.Errorf("the publishing connection is %p, its automatic recovery on", publishing)
	}
	if n := p.open(); n != 2 {
		t.Errorf("%d connections through the proxy since the loss, want 2 (the Transport's main and publishing ones)", n)
	}
	if st := tr.State(); st.Connects != 2 {
		t.Errorf("the Transport connected %d times, want 2", st.Connects)
	}
}

// A refused publish retires its channel: the publishes in flight on it still
// get their answers, later ones go on a new channel, and the old one closes.
// (RabbitMQ 3.10.8 can refuse every publish on a channel that first
// published to a quorum queue while its leader was replaced; the chaos
// harness's failover scenario found it.)
func TestRefusalRetiresThePublishingChannel(t *testing.T) {
	t.Parallel()
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	full := classicQueue(t, tr, transport.Table{"x-max-length": int64(1), "x-overflow": "reject-publish"})
	other := classicQueue(t, tr, nil)
	publish(t, tr, full, "fills it")
	first := tr.pub

	var confs []*transport.Confirmation
	for i := range 5 {
		q := full
		if i%2 == 1 {
			q = other
		}
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true, Message: transport.Message{Body: []byte{byte(i)}}})
		if err != nil {
			t.Fatal(err)
		}
		confs = append(confs, c)
	}
	refused := 0
	for i, c := range confs {
		err := c.Wait(ctx)
		switch {
		case errors.Is(err, transport.ErrRefused):
			refused++
		case err != nil:
			t.Errorf("publish %d: %v", i, err)
		}
	}
	if refused == 0 {
		t.Fatal("no publish into the full queue was refused")
	}
	publish(t, tr, other, "after the refusal")
	if tr.pub == first {
		t.Error("still publishing on the channel that refused")
	}
	eventually(t, ctx, "the refusing channel to close", first.ch.IsClosed)
	if st, err := tr.InspectQueue(ctx, other); err != nil || st.Messages < 2 {
		t.Errorf("%s holds %d messages (%v), want the ones not refused", other, st.Messages, err)
	}
}

func TestBlocked(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil)
	var logs logBuffer
	tr := dial(t, p.url(t, "amqp"), Options{Logger: logs.logger()})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "opens the publishing connection, the one the broker blocks")

	const reason = "low on memory (test)"
	p.inject(10, 60, append([]byte{byte(len(reason))}, reason...))
	eventually(t, ctx, "Blocked", func() bool { return tr.State().Blocked })
	if r := tr.State().BlockedReason; r != reason {
		t.Errorf("BlockedReason %q, want %q", r, reason)
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := tr.Publish(short, transport.Publishing{RoutingKey: q})
	cancel()
	if !errors.Is(err, transport.ErrBlocked) || !strings.Contains(err.Error(), reason) {
		t.Errorf("Publish while blocked: %v, want ErrBlocked with the reason", err)
	}

	done := make(chan error, 1)
	go func() {
		c, err := tr.Publish(ctx, transport.Publishing{RoutingKey: q, Mandatory: true})
		if err == nil {
			err = c.Wait(ctx)
		}
		done <- err
	}()
	p.inject(10, 61, nil)
	if err := <-done; err != nil {
		t.Errorf("Publish across the unblock: %v", err)
	}
	if tr.State().Blocked {
		t.Error("still Blocked after connection.unblocked")
	}
	for _, want := range []string{"connection blocked", reason, "connection unblocked"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	ca, otherCA := newCA(t), newCA(t)
	localhost := ca.issue(t, "localhost", []string{"localhost"}, net.IPv4(127, 0, 0, 1))
	named := ca.issue(t, "rabbit.test", []string{"rabbit.test"})
	client := ca.issue(t, "client", nil)

	try := func(t *testing.T, p *proxy, cfg *tls.Config) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tr, err := Dial(ctx, p.url(t, "amqps"), Options{TLS: cfg})
		if err != nil {
			return err
		}
		defer tr.Close()
		q := classicQueue(t, tr, nil)
		publish(t, tr, q, "over TLS")
		return nil
	}

	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		p := startProxy(t, &tls.Config{Certificates: []tls.Certificate{localhost}})
		cfg := &tls.Config{RootCAs: ca.pool}
		if err := try(t, p, cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.ServerName != "" {
			t.Error("Dial changed the caller's tls.Config")
		}
	})
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		p := startProxy(t, &tls.Config{Certificates: []tls.Certificate{localhost}})
		err := try(t, p, &tls.Config{RootCAs: otherCA.pool})
		t.Log(err)
		if _, ok := errors.AsType[x509.UnknownAuthorityError](err); !ok || !strings.Contains(err.Error(), "not trusted") {
			t.Errorf("Dial with another CA: %v, want an error saying the certificate is not trusted", err)
		}
	})
	t.Run("client certificate", func(t *testing.T) {
		t.Parallel()
		p := startProxy(t, &tls.Config{Certificates: []tls.Certificate{localhost},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.pool})
		if err := try(t, p, &tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{client}}); err != nil {
			t.Fatal(err)
		}
		err := try(t, p, &tls.Config{RootCAs: ca.pool})
		if err == nil {
			t.Error("Dial without the required client certificate succeeded")
		}
		t.Log(err)
	})
	t.Run("server name", func(t *testing.T) {
		t.Parallel()
		p := startProxy(t, &tls.Config{Certificates: []tls.Certificate{named}})
		cfg := &tls.Config{RootCAs: ca.pool, ServerName: "rabbit.test"}
		if err := try(t, p, cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.ServerName != "rabbit.test" {
			t.Error("Dial changed the caller's tls.Config")
		}
		err := try(t, p, &tls.Config{RootCAs: ca.pool})
		if err == nil {
			t.Error("a certificate for rabbit.test was accepted for 127.0.0.1")
		}
		t.Log(err)
	})
}

func TestCredentialsError(t *testing.T) {
	t.Parallel()
	u := brokertest.URL(t)
	boom := errors.New("vault sealed")
	_, err := Dial(testCtx(t), u, Options{Credentials: func(context.Context) (string, string, error) { return "", "", boom }})
	if !errors.Is(err, boom) {
		t.Errorf("Dial = %v, want the provider's error", err)
	}
	const secret = "definitely-wrong"
	_, err = Dial(testCtx(t), u, Options{Credentials: func(context.Context) (string, string, error) { return "guest", secret, nil }})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Dial with a wrong password = %v", err)
	}
}

// Not parallel: no other test of this package runs meanwhile, so every
// goroutine of the package and of amqp091 belongs to this Transport.
func TestCloseEndsEverything(t *testing.T) {
	tr := dial(t, "", Options{})
	ctx := testCtx(t)
	q := classicQueue(t, tr, nil)
	publish(t, tr, q, "1")
	publish(t, tr, q, "2")
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := receive(t, ctx, s)
	got, ok, err := tr.Get(ctx, q)
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}

	if err := tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close waits until every goroutine it owns has done its work; each
	// still makes its own exit after telling Close so (WaitGroup.Done), and
	// was once seen "runnable" in that last step, its work done.
	left := goroutines("acemq/transport/rabbitmq.(*")
	for deadline := time.Now().Add(5 * time.Second); left != "" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		left = goroutines("acemq/transport/rabbitmq.(*")
	}
	if left != "" {
		t.Errorf("goroutines of the Transport left 5 s after Close:\n%s", left)
	}
	eventually(t, ctx, "amqp091's goroutines to end", func() bool { return goroutines("amqp091-go.") == "" })

	for _, err := range []error{
		tr.DeclareExchange(ctx, transport.Exchange{Name: q, Type: transport.Direct}),
		tr.DeclareQueue(ctx, transport.Queue{Name: q}),
		tr.Bind(ctx, transport.Binding{Queue: q, Exchange: q}),
		second(tr.InspectQueue(ctx, q)),
		second(tr.PurgeQueue(ctx, q)),
		second(tr.DeleteQueue(ctx, q)),
		second(tr.Publish(ctx, transport.Publishing{RoutingKey: q})),
		second(tr.Consume(ctx, q, transport.ConsumeOptions{})),
		func() error { _, _, err := tr.Get(ctx, q); return err }(),
		d.Ack(),
		got.Nack(true),
		s.Cancel(ctx),
	} {
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("after Close: %v, want ErrClosed", err)
		}
	}
	if _, ok := <-transporttest.Chan(s); ok {
		t.Error("Deliveries open after Close")
	}
	if st := tr.State(); st.Blocked || st.Connected || !st.Closed {
		t.Errorf("State after Close: %+v, want closed, not connected, not blocked", st)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// goroutines returns the stacks of the goroutines (but this one) with a
// frame containing fn.
func goroutines(fn string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i > 0 && strings.Contains(g, fn) {
			found = append(found, g)
		}
	}
	return strings.Join(found, "\n\n")
}
