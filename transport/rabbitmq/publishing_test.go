package rabbitmq

import (
	"testing"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
	"github.com/acemq-go/acemq/transport"
)

// A Transport that does not publish keeps to the one connection Dial
// opened, whatever else it does; its first publish opens a second one, the
// publishing connection, named ConnectionName + ".publisher", through
// the same address, and later publishes share it.
func TestPublishingConnectionOnlyOncePublishing(t *testing.T) {
	t.Parallel()
	p := startProxy(t, nil)
	name := brokertest.UniqueName(t, "conn")
	tr := dial(t, p.url(t, "amqp"), Options{ConnectionName: name})
	ctx := testCtx(t)

	q := classicQueue(t, tr, nil)
	s, err := tr.Consume(ctx, q, transport.ConsumeOptions{Prefetch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.Get(ctx, q); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if _, err := tr.InspectQueue(ctx, q); err != nil {
		t.Fatalf("InspectQueue: %v", err)
	}
	if err := tr.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if n := p.open(); n != 1 {
		t.Errorf("%d connections before the first publish, want 1", n)
	}

	publish(t, tr, q, "first")
	publish(t, tr, q, "second")
	if n := p.open(); n != 2 {
		t.Errorf("%d connections after two publishes, want 2 (the main and the publishing one)", n)
	}
	for _, want := range []string{"first", "second"} {
		if d := receive(t, ctx, s); string(d.Body) != want {
			t.Errorf("received %q, want %q", d.Body, want)
		} else if err := d.Ack(); err != nil {
			t.Errorf("Ack: %v", err)
		}
	}
	if got, want := PublishingConnectionName(name), name+".publisher"; got != want {
		t.Errorf("PublishingConnectionName(%q) = %q, want %q", name, got, want)
	}
	brokertest.AwaitConnections(t, name, name+".publisher")
	if st := tr.State(); !st.Connected || st.Connects != 1 {
		t.Errorf("State: %+v, want connected, Connects 1 (a first connect is no recovery)", st)
	}
}
