package rabbitmq

import (
	"context"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// deadURL is the test broker's URL (its credentials, or pass when set) with
// a port on 127.0.0.1 that nothing listens on.
func deadURL(t *testing.T, pass string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u, err := url.Parse(brokertest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	if pass != "" {
		u.User = url.UserPassword(u.User.Username(), pass)
	}
	return u.String()
}

// stop makes the proxy go away as a dead node would: it refuses new
// connections and cuts the open ones.
func (p *proxy) stop() {
	_ = p.ln.Close()
	p.closeConns()
}

func (p *proxy) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// consumeCounting subscribes to a quorum queue named for the test, declared
// by a Setup that counts its runs.
func consumeCounting(t *testing.T, tr *Transport) (string, transport.Subscription, *atomic.Int32) {
	t.Helper()
	q := brokertest.UniqueName(t, "q")
	var setups atomic.Int32
	s, err := tr.Consume(testCtx(t), q, transport.ConsumeOptions{Prefetch: 10, Setup: func(ctx context.Context, d transport.Declarer) error {
		setups.Add(1)
		return d.DeclareQueue(ctx, transport.Queue{Name: q, Type: transport.Quorum, Durable: true})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Cancel(ctx)
		_, _ = tr.DeleteQueue(ctx, q)
	})
	return q, s, &setups
}

// receiveAcked receives the next delivery, acks it and checks its body. A
// delivery of one of earlier, marked redelivered, is acked and skipped: its
// ack may have been sent just before the connection was cut.
func receiveAcked(t *testing.T, s transport.Subscription, want string, earlier ...string) {
	t.Helper()
	for {
		d := receive(t, testCtx(t), s)
		again := d.Redelivered && slices.Contains(earlier, string(d.Body))
		if !again && string(d.Body) != want {
			t.Errorf("received %q, want %q", d.Body, want)
		}
		if err := d.Ack(); err != nil {
			t.Errorf("Ack %s: %v", d.Body, err)
		}
		if !again {
			return
		}
	}
}

// The first address is dead: Dial goes on to the second, and a reconnect
// (which starts with the address after the one lost, round to the dead one)
// finds it again.
func TestAddressesSkipADeadOne(t *testing.T) {
	t.Parallel()
	const secret = "dead-node-s3cret"
	var logs logBuffer
	name := brokertest.UniqueName(t, "conn")
	dead, live := deadURL(t, secret), brokertest.URL(t)
	tr := dial(t, dead, Options{ConnectionName: name, Logger: logs.logger(), Addresses: []string{live}})
	if got, want := tr.String(), "rabbitmq "+RedactURL(live); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	q, s, setups := consumeCounting(t, tr)
	publish(t, tr, q, "before")
	receiveAcked(t, s, "before")

	ctx := testCtx(t)
	brokertest.CloseConnections(t, name)
	eventually(t, ctx, "the second connection", func() bool { return tr.State().Connects == 2 })
	publish(t, tr, q, "after")
	receiveAcked(t, s, "after", "before")
	if n := setups.Load(); n != 2 {
		t.Errorf("Setup ran %d times, want 2", n)
	}
	if got, want := tr.String(), "rabbitmq "+RedactURL(live); got != want {
		t.Errorf("String() after the reconnect = %q, want %q", got, want)
	}
	if out := logs.String(); strings.Contains(out, secret) {
		t.Errorf("log shows the password:\n%s", out)
	}
}

// When no address answers, the error names each, without its password.
func TestAddressesAllDead(t *testing.T) {
	t.Parallel()
	const secret = "all-dead-s3cret"
	urls := []string{deadURL(t, secret), deadURL(t, secret), deadURL(t, secret)}
	tr, err := Dial(testCtx(t), urls[0], Options{Addresses: urls[1:]})
	if err == nil {
		tr.Close()
		t.Fatal("Dial succeeded with no address alive")
	}
	msg := err.Error()
	if strings.Contains(msg, secret) {
		t.Errorf("error shows the password: %v", err)
	}
	for _, u := range urls {
		if !strings.Contains(msg, RedactURL(u)) {
			t.Errorf("error does not name %s: %v", RedactURL(u), err)
		}
	}
	t.Logf("%v", err)
}

// An invalid fallback address is Dial's error, before any connect.
func TestAddressesInvalid(t *testing.T) {
	t.Parallel()
	const secret = "s3cret/x"
	_, err := Dial(testCtx(t), brokertest.URL(t), Options{Addresses: []string{"http://guest:pw@localhost/", "amqp://guest:" + secret + "@localhost/"}})
	if err == nil || strings.Contains(err.Error(), "pw@") {
		t.Errorf("an http:// address: %v", err)
	}
	_, err = Dial(testCtx(t), brokertest.URL(t), Options{Addresses: []string{"amqp://guest:" + secret + "@localhost/"}})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("an unparsable address: %v", err)
	}
}

// Node A goes away and node B stays: the Transport follows to B, the
// subscription runs Setup again there and publishes are confirmed.
func TestAddressesFailover(t *testing.T) {
	t.Parallel()
	a, b := startProxy(t, nil), startProxy(t, nil)
	tr := dial(t, a.url(t, "amqp"), Options{Addresses: []string{b.url(t, "amqp")}})
	if got, want := tr.String(), "rabbitmq "+RedactURL(a.url(t, "amqp")); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	q, s, setups := consumeCounting(t, tr)
	publish(t, tr, q, "before")
	receiveAcked(t, s, "before")
	if b.open() != 0 {
		t.Fatalf("%d connections through B before A went away", b.open())
	}

	a.stop()
	ctx := testCtx(t)
	// The main and the publishing connection, each recovered once.
	eventually(t, ctx, "the connections through B", func() bool { return tr.State().Connects == 3 })
	if got, want := tr.String(), "rabbitmq "+RedactURL(b.url(t, "amqp")); got != want {
		t.Errorf("String() after the failover = %q, want %q", got, want)
	}
	publish(t, tr, q, "after")
	receiveAcked(t, s, "after", "before")
	if n := setups.Load(); n != 2 {
		t.Errorf("Setup ran %d times, want 2", n)
	}
	if b.open() == 0 {
		t.Error("no connection through B")
	}
}

// A reconnect starts with the address after the one lost, even when that
// one still answers: the round goes A, B, A.
func TestAddressesRotate(t *testing.T) {
	t.Parallel()
	a, b := startProxy(t, nil), startProxy(t, nil)
	tr := dial(t, a.url(t, "amqp"), Options{Addresses: []string{b.url(t, "amqp")}})
	ctx := testCtx(t)
	for i, p := range []*proxy{b, a} {
		prev := a
		if p == a {
			prev = b
		}
		prev.closeConns() // cut, but still listening
		eventually(t, ctx, "the next connection", func() bool { return tr.State().Connects == i+2 })
		if got, want := tr.String(), "rabbitmq "+RedactURL(p.url(t, "amqp")); got != want {
			t.Errorf("reconnect %d: String() = %q, want %q", i+1, got, want)
		}
		if p.open() == 0 {
			t.Errorf("reconnect %d: no connection through %s", i+1, RedactURL(p.url(t, "amqp")))
		}
	}
}
