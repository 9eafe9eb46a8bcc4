// Package storetest is the contract of an idempotency.Store (CONTRACT.md
// section 16) as one suite, run on every store: Memory, SQLite, PostgreSQL.
package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/internal/testing/testclock"
)

// Target is a store under test.
type Target struct {
	// New returns a function opening the store for the test: each call a
	// store of its own (its own pool of connections, where it has one) on
	// the same records, all on clock.
	New func(t *testing.T, clock func() time.Time) (open func() idempotency.Store)
}

const (
	timeout   = 5 * time.Minute
	retention = 24 * time.Hour
)

// Run runs every test of the suite on target.
func Run(t *testing.T, target Target) {
	tests := []struct {
		name string
		run  func(t *testing.T, open func() idempotency.Store, clock *testclock.Clock)
	}{
		{"ClaimThenInProgress", claimThenInProgress},
		{"ConfirmedIsADuplicate", confirmedIsADuplicate},
		{"ForgetReleasesOnlyTheOwnersClaim", forgetReleasesOnlyTheOwnersClaim},
		{"ExpiredClaimIsTakenOver", expiredClaimIsTakenOver},
		{"ConfirmationExpires", confirmationExpires},
		{"Prune", prune},
		{"Invalid", invalid},
		{"ConcurrentClaims", concurrentClaims},
		{"ConcurrentDuplicates", concurrentDuplicates},
		{"ConsumersDeduplicate", consumersDeduplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Milliseconds: what SQLite keeps of a time.
			clock := testclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
			tt.run(t, target.New(t, clock.Now), clock)
		})
	}
}

func claim(t *testing.T, s idempotency.Store, key, owner string, want idempotency.Result) {
	t.Helper()
	got, err := s.Claim(t.Context(), key, owner, timeout)
	if err != nil || got != want {
		t.Fatalf("Claim(%q, %q) = %v, %v; want %v", key, owner, got, err, want)
	}
}

func claimThenInProgress(t *testing.T, open func() idempotency.Store, _ *testclock.Clock) {
	a, b := open(), open()
	claim(t, a, "m-1", "a", idempotency.Claimed)
	claim(t, b, "m-1", "b", idempotency.InProgress)
	claim(t, a, "m-1", "a", idempotency.InProgress) // a claim is not re-entrant
	claim(t, b, "m-2", "b", idempotency.Claimed)
}

func confirmedIsADuplicate(t *testing.T, open func() idempotency.Store, _ *testclock.Clock) {
	a, b := open(), open()
	claim(t, a, "m-1", "a", idempotency.Claimed)
	if err := a.Confirm(t.Context(), "m-1", retention); err != nil {
		t.Fatal(err)
	}
	claim(t, b, "m-1", "b", idempotency.Confirmed)
	claim(t, a, "m-1", "a", idempotency.Confirmed)
	if err := a.Forget(t.Context(), "m-1", "a"); err != nil {
		t.Fatal(err)
	}
	claim(t, b, "m-1", "b", idempotency.Confirmed) // a confirmation is not forgotten
	// A confirm without a claim (it was forgotten, or pruned) records it.
	if err := b.Confirm(t.Context(), "m-2", retention); err != nil {
		t.Fatal(err)
	}
	claim(t, a, "m-2", "a", idempotency.Confirmed)
}

func forgetReleasesOnlyTheOwnersClaim(t *testing.T, open func() idempotency.Store, _ *testclock.Clock) {
	a, b := open(), open()
	claim(t, a, "m-1", "a", idempotency.Claimed)
	if err := b.Forget(t.Context(), "m-1", "b"); err != nil {
		t.Fatal(err)
	}
	claim(t, b, "m-1", "b", idempotency.InProgress)
	if err := a.Forget(t.Context(), "m-1", "a"); err != nil {
		t.Fatal(err)
	}
	claim(t, b, "m-1", "b", idempotency.Claimed)
	if err := a.Forget(t.Context(), "never-claimed", "a"); err != nil {
		t.Errorf("Forget of a key never claimed: %v", err)
	}
}

func expiredClaimIsTakenOver(t *testing.T, open func() idempotency.Store, clock *testclock.Clock) {
	a, b := open(), open()
	claim(t, a, "m-1", "a", idempotency.Claimed)
	clock.Advance(timeout - time.Millisecond)
	claim(t, b, "m-1", "b", idempotency.InProgress)
	clock.Advance(time.Millisecond)
	claim(t, b, "m-1", "b", idempotency.Claimed) // expired at expires_at
	// The first owner, back from the dead, releases nothing of b's.
	if err := a.Forget(t.Context(), "m-1", "a"); err != nil {
		t.Fatal(err)
	}
	claim(t, a, "m-1", "a", idempotency.InProgress)
}

func confirmationExpires(t *testing.T, open func() idempotency.Store, clock *testclock.Clock) {
	a := open()
	claim(t, a, "m-1", "a", idempotency.Claimed)
	if err := a.Confirm(t.Context(), "m-1", retention); err != nil {
		t.Fatal(err)
	}
	clock.Advance(retention - time.Millisecond)
	claim(t, a, "m-1", "b", idempotency.Confirmed)
	clock.Advance(time.Millisecond)
	claim(t, a, "m-1", "b", idempotency.Claimed)
}

func prune(t *testing.T, open func() idempotency.Store, clock *testclock.Clock) {
	s := open()
	claim(t, s, "claimed-early", "a", idempotency.Claimed) // expires at +5m
	if err := s.Confirm(t.Context(), "confirmed", time.Hour); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	claim(t, s, "claimed-late", "a", idempotency.Claimed) // expires at +6m
	if n, err := s.Prune(t.Context(), clock.Now()); err != nil || n != 0 {
		t.Fatalf("Prune before anything expired = %d, %v", n, err)
	}
	if n, err := s.Prune(t.Context(), clock.Now().Add(5*time.Minute)); err != nil || n != 2 {
		t.Fatalf("Prune at +6m = %d, %v; want 2 (claimed-early, claimed-late)", n, err)
	}
	// Pruned rows are gone: a claim is an insert again; the confirmation is
	// still a duplicate.
	claim(t, s, "claimed-early", "b", idempotency.Claimed)
	claim(t, s, "confirmed", "b", idempotency.Confirmed)
	if n, err := s.Prune(t.Context(), clock.Now().Add(2*time.Hour)); err != nil || n != 2 {
		t.Fatalf("Prune at +2h = %d, %v; want 2", n, err)
	}
	claim(t, s, "confirmed", "b", idempotency.Claimed)
}

func invalid(t *testing.T, open func() idempotency.Store, _ *testclock.Clock) {
	s := open()
	long := strings.Repeat("k", 256)
	for _, c := range []struct{ key, owner string }{{"", "a"}, {"m", ""}, {long, "a"}, {"m", strings.Repeat("o", 65)}, {"\xff", "a"}} {
		if _, err := s.Claim(t.Context(), c.key, c.owner, timeout); !errors.Is(err, idempotency.ErrInvalid) {
			t.Errorf("Claim(%.20q, %.20q) = %v; want ErrInvalid", c.key, c.owner, err)
		}
	}
	if _, err := s.Claim(t.Context(), "m", "a", 0); !errors.Is(err, idempotency.ErrInvalid) {
		t.Errorf("Claim with no timeout = %v; want ErrInvalid", err)
	}
	if err := s.Confirm(t.Context(), "m", -time.Second); !errors.Is(err, idempotency.ErrInvalid) {
		t.Errorf("Confirm with a negative retention = %v; want ErrInvalid", err)
	}
	// The limits are characters, as VARCHAR counts them, not bytes.
	claim(t, s, strings.Repeat("é", 255), strings.Repeat("ø", 64), idempotency.Claimed)
}

// Of the owners claiming one key at once, each through a store of its
// own, exactly one gets it.
func concurrentClaims(t *testing.T, open func() idempotency.Store, _ *testclock.Clock) {
	const owners, keys = 4, 10
	stores := make([]idempotency.Store, owners)
	for i := range stores {
		stores[i] = open()
	}
	results := make([][keys]idempotency.Result, owners)
	errs := make([]error, owners)
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			start.Wait()
			for k := range keys {
				r, err := stores[i].Claim(t.Context(), fmt.Sprintf("race-%d", k), fmt.Sprintf("owner-%d", i), timeout)
				if err != nil {
					errs[i] = err
					return
				}
				results[i][k] = r
			}
		})
	}
	start.Done()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		won := 0
		for i := range owners {
			switch results[i][k] {
			case idempotency.Claimed:
				won++
			case idempotency.InProgress:
			default:
				t.Errorf("race-%d, owner %d: %v", k, i, results[i][k])
			}
		}
		if won != 1 {
			t.Errorf("race-%d: %d owners claimed it; want exactly 1", k, won)
		}
	}
}

// Two consumers, each a store of its own with eight handlers, given every
// message (the first twice, so that two of its handlers hold one id at
// once): each message's handler runs exactly once, however its copies'
// claims and confirms are grouped.
func concurrentDuplicates(t *testing.T, open func() idempotency.Store, _ *testclock.Clock) {
	const keys, handlers = 40, 8
	runs := make([]atomic.Int32, keys)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for c, copies := range []int{2, 1} {
		s, owner := open(), fmt.Sprintf("consumer-%d", c)
		feed := make(chan int, keys*copies)
		for k := range keys {
			for range copies {
				feed <- k
			}
		}
		close(feed)
		for range handlers {
			wg.Go(func() {
				for k := range feed {
					if err := handleOnce(t, s, owner, fmt.Sprintf("dup-%d", k), &runs[k]); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		if n := runs[k].Load(); n != 1 {
			t.Errorf("dup-%d: the handler ran %d times; want once", k, n)
		}
	}
}

// handleOnce is the idempotent consumer's step for one copy: claim; run
// (count) and confirm if claimed; put back (claim again) while another
// holds it; done once it is confirmed.
func handleOnce(t *testing.T, s idempotency.Store, owner, key string, runs *atomic.Int32) error {
	for {
		r, err := s.Claim(t.Context(), key, owner, timeout)
		switch {
		case err != nil:
			return fmt.Errorf("claim %s by %s: %w", key, owner, err)
		case r == idempotency.Confirmed:
			return nil
		case r == idempotency.Claimed:
			runs.Add(1)
			return s.Confirm(t.Context(), key, retention)
		}
	}
}
