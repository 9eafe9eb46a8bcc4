package memory_test

import (
	"testing"
	"time"

	"github.com/acemq-go/acemq/transport"
	"github.com/acemq-go/acemq/transport/memory"
	"github.com/acemq-go/acemq/transport/transporttest"
)

// TestConformance runs the transport conformance suite, the one RabbitMQ
// passes, against a fresh in-process broker on real time, once for each
// RabbitMQ version memory:// emulates. The dead-letter worker of an
// at-least-once queue retries after a second rather than RabbitMQ's three
// minutes, so that the suite need not wait them on real time (its default
// is pinned on a manual clock by TestAtLeastOnceRetriesEveryThreeMinutes).
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"4.3", "4.0", "3.10"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			b := memory.NewBroker(memory.WithClock(memory.SystemClock), memory.WithRabbitMQVersion(version),
				memory.WithSettleTimeout(time.Second))
			t.Cleanup(b.Close)
			transporttest.Run(t, transporttest.Target{
				Name:      "memory",
				Emulation: true,
				Connect: func(t *testing.T) transport.Transport {
					tr := b.Connect()
					t.Cleanup(func() { _ = tr.Close() })
					return tr
				},
			})
		})
	}
}
