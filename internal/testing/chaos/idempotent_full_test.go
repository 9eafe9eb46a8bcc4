//go:build chaos

package chaos

import (
	"testing"
	"time"

	"github.com/acemq-go/acemq/internal/testing/brokertest"
)

// TestChaosIdempotentFull runs the idempotent consumer through the full
// kill and close scenarios (20 SIGKILLs, 10 forced closes) on SQLite and
// PostgreSQL, with each handler, and prints their reports; `make
// chaos-idempotent` runs it on a node of its own and the test PostgreSQL.
func TestChaosIdempotentFull(t *testing.T) {
	brokertest.URL(t)
	bin := buildConsumer(t)
	for _, db := range []string{"SQLite", "PostgreSQL"} {
		for _, mode := range []struct {
			name   string
			sameTx bool
		}{{"handler", false}, {"tx", true}} {
			for _, sc := range []struct {
				name   string
				faults int
			}{{Kill, 20}, {Close, 10}} {
				t.Run(db+"/"+mode.name+"/"+sc.name, func(t *testing.T) {
					runIdempotent(t, bin, db, mode.sameTx, sc.name, sc.faults, 2*time.Second, 120*time.Second)
				})
			}
		}
	}
}
