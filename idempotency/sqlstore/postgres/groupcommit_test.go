package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency"
)

// A write PostgreSQL refuses (a key with a NUL character, which its text
// cannot hold) fails its own caller only: the claims made beside it, and
// so perhaps grouped with it, are claimed.
func TestAFailedWriteFailsOnlyItsCaller(t *testing.T) {
	s, _ := openStore(t)
	const callers = 8
	for round := range 5 {
		results := make([]idempotency.Result, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			key := fmt.Sprintf("r%d-m-%d", round, i)
			if i == round {
				key += "\x00"
			}
			wg.Go(func() { results[i], errs[i] = s.Claim(t.Context(), key, "me", time.Minute) })
		}
		wg.Wait()
		for i := range callers {
			switch {
			case i == round && errs[i] == nil:
				t.Errorf("round %d: the claim of a key with a NUL = %v, no error", round, results[i])
			case i != round && (errs[i] != nil || results[i] != idempotency.Claimed):
				t.Errorf("round %d: claim %d beside a failing one = %v, %v; want claimed", round, i, results[i], errs[i])
			}
		}
	}
}
