package idempotency_test

import (
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/internal/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, storetest.Target{
		New: func(t *testing.T, clock func() time.Time) func() idempotency.Store {
			m := idempotency.NewMemory(clock)
			return func() idempotency.Store { return m } // one process: one store
		},
	})
}
