package acemqtest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/acemqtest"
	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
)

// Each test gets a broker of its own.
func TestBrokersAreSeparate(t *testing.T) {
	one, two := acemqtest.NewBroker(t), acemqtest.NewBroker(t)
	if one.URL == two.URL {
		t.Fatal("two brokers share a URL")
	}
	ctx := context.Background()
	if err := one.Connect(t).Transport().DeclareQueue(ctx, transport.Queue{Name: "q", Type: transport.Classic, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := two.Connect(t).Transport().InspectQueue(ctx, "q"); !errors.Is(err, acemq.ErrNotFound) {
		t.Errorf("the second broker sees the first's queue: %v", err)
	}
}

// A broker behaves as RabbitMQ 4.3 unless told otherwise, and says so.
func TestBrokerVersion(t *testing.T) {
	for _, tt := range []struct {
		opts []memory.Option
		want string
	}{
		{nil, "4.3.6"},
		{[]memory.Option{memory.WithRabbitMQVersion("4.0")}, "4.0.5"},
		{[]memory.Option{memory.WithRabbitMQVersion("3.10")}, "3.10.8"},
	} {
		b := acemqtest.NewBroker(t, tt.opts...)
		if got := b.Connect(t).Transport().State().ServerVersion; got != tt.want {
			t.Errorf("NewBroker(%d options): ServerVersion %q, want %q", len(tt.opts), got, tt.want)
		}
	}
}

// The package's example test runs as it is shown.
func TestTheExampleRuns(t *testing.T) { checkoutTest(t) }
