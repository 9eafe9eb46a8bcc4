//go:build chaos

package outboxchaos

import (
	"testing"
	"time"
)

// The full run (go test -tags chaos -run TestOutboxChaosFull -v
// ./internal/chaos/outbox/): 5000 records, 10 kills, on each database.
func TestOutboxChaosFull(t *testing.T) {
	run(t, 5000, 400, 10, 3*time.Second)
}
