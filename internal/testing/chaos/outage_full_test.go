//go:build chaos

package chaos

import (
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// TestChaosOutage is the outage scenario of docs/reliability.md: a steady
// 50 messages a second, the dependency down for 30s after 10s of load, 20s
// more after it; the consumer's policy OutagePolicy; with the default
// circuit breaker, then without one. `make chaos-outage` runs it.
func TestChaosOutage(t *testing.T) {
	cfg := OutageConfig{URL: brokertest.URL(t), Before: 10 * time.Second, Outage: 30 * time.Second, After: 20 * time.Second}
	with, without := runOutages(t, cfg, acemq.CircuitBreaker{})
	if with.PausedAfter == 0 {
		t.Errorf("with a breaker, the consumer never paused")
	}
	t.Logf("dead-lettered because of the outage: %d with the breaker, %d without", with.OutageDeadLettered, without.OutageDeadLettered)
}
