package memory_test

import (
	"testing"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// TestConformance runs the transport conformance suite, the one RabbitMQ
// passes, against a fresh in-process broker on real time.
func TestConformance(t *testing.T) {
	t.Parallel()
	b := memory.NewBroker(memory.WithClock(memory.SystemClock))
	t.Cleanup(b.Close)
	transporttest.Run(t, transporttest.Target{
		Name:           "memory",
		RefusesStreams: true,
		Connect: func(t *testing.T) transport.Transport {
			tr := b.Connect()
			t.Cleanup(func() { _ = tr.Close() })
			return tr
		},
	})
}
