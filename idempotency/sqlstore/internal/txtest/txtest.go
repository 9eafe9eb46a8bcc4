// Package txtest is the contract of sqlstore.TxHandler as one suite, run on
// every database: SQLite and PostgreSQL. The handler's work is a row
// inserted in the transaction that confirms the message.
package txtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/idempotency"
	"github.com/acemq-go/acemq/idempotency/sqlstore"
	"github.com/acemq-go/acemq/internal/testing/testclock"
)

// Target is a database under test.
type Target struct {
	// Open returns a function opening a store for the test: each call a
	// store of its own (its own pool) on the same table and database, all
	// on clock.
	Open func(t *testing.T, clock func() time.Time) (open func() *sqlstore.Store)
	// Work is the name of a table for the handler's work, made by the
	// suite and dropped when the test ends (shared servers: unique per
	// test).
	Work func(t *testing.T) string
	// Param is the database's first query parameter: "?" or "$1".
	Param string
	// FailAtCommit is DDL (%[1]s the table's name) making a table with a
	// column n whose insert of the value "bad" succeeds but makes the
	// transaction's COMMIT fail (a deferred constraint). It may hold rows
	// of its own.
	FailAtCommit string
}

// Run runs every test of the suite on target.
func Run(t *testing.T, target Target) {
	tests := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"AcceptCommitsTheWorkOnce", acceptCommitsTheWorkOnce},
		{"FailureRollsBack", failureRollsBack},
		{"PanicRollsBack", panicRollsBack},
		{"InProgressIsPutBack", inProgressIsPutBack},
		{"CommitFailure", commitFailure},
		{"LostClaim", lostClaim},
		{"ClaimConfirmedByAnother", claimConfirmedByAnother},
		{"WithoutKey", withoutKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
			e := &env{t: t, target: target, clock: c, open: target.Open(t, c.Now)}
			e.store = e.open()
			e.work = target.Work(t)
			e.exec(fmt.Sprintf("CREATE TABLE %s (n VARCHAR(64) NOT NULL)", e.work))
			tt.run(t, e)
		})
	}
}

type env struct {
	t      *testing.T
	target Target
	clock  *testclock.Clock
	open   func() *sqlstore.Store
	store  *sqlstore.Store
	work   string
}

func (e *env) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.store.DB().ExecContext(e.t.Context(), q, args...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

// rows counts the work table's rows of n.
func (e *env) rows(table, n string) int {
	e.t.Helper()
	var c int
	if err := e.store.DB().QueryRowContext(e.t.Context(), "SELECT COUNT(*) FROM "+table+" WHERE n = "+e.target.Param, n).Scan(&c); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// insert is a handler's work: a row of n in table, in tx.
func (e *env) insert(ctx context.Context, tx *sql.Tx, table, n string) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (n) VALUES ("+e.target.Param+")", n)
	return err
}

// claim claims key for owner through another store, and says what it got.
func (e *env) claim(key, owner string, timeout time.Duration) idempotency.Result {
	e.t.Helper()
	r, err := e.open().Claim(e.t.Context(), key, owner, timeout)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func msg(id string) acemq.Message[string] {
	return acemq.Message[string]{Envelope: acemq.Envelope{ID: id, Attempt: 1}, Body: "body"}
}

// kind is a decision's verdict alone: "accept", "retry", "requeue"...
func kind(d acemq.Decision) string {
	k, _, _ := strings.Cut(d.String(), " ")
	return k
}

// handler is a TxHandler whose work is a row of the message's id in the
// work table; then decide says what it returns. It counts its runs.
func (e *env) handler(runs *int, decide func(ctx context.Context, tx *sql.Tx) acemq.Decision, opts ...idempotency.Option) acemq.Handler[string] {
	return must(e.t)(sqlstore.TxHandler(e.store, func(ctx context.Context, tx *sql.Tx, m acemq.Message[string]) acemq.Decision {
		*runs++
		if err := e.insert(ctx, tx, e.work, m.Envelope.ID); err != nil {
			return acemq.Retry(err)
		}
		return decide(ctx, tx)
	}, append([]idempotency.Option{idempotency.WithOwner("me"), idempotency.WithClaimTimeout(time.Minute)}, opts...)...))
}

// must fails the test if TxHandler refused what it was given.
func must(t *testing.T) func(acemq.Handler[string], error) acemq.Handler[string] {
	return func(h acemq.Handler[string], err error) acemq.Handler[string] {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
}

func accept(context.Context, *sql.Tx) acemq.Decision { return acemq.Accept() }

func acceptCommitsTheWorkOnce(t *testing.T, e *env) {
	runs := 0
	var seen []idempotency.Result
	h := e.handler(&runs, accept, idempotency.OnClaim(func(_ string, r idempotency.Result) { seen = append(seen, r) }))
	for range 3 {
		if d := h(t.Context(), msg("m-1")); d != acemq.Accept() {
			t.Fatalf("decision %v; want accept", d)
		}
	}
	if runs != 1 || e.rows(e.work, "m-1") != 1 {
		t.Errorf("the handler ran %d times, its work is in %d rows; want 1 and 1", runs, e.rows(e.work, "m-1"))
	}
	if fmt.Sprint(seen) != "[claimed confirmed confirmed]" {
		t.Errorf("claims seen %v; want one claimed then two duplicates", seen)
	}
	if r := e.claim("m-1", "other", time.Minute); r != idempotency.Confirmed {
		t.Errorf("m-1 is %v for another owner; want confirmed", r)
	}
}

// A handler that does not accept leaves no work and no claim: the next
// copy runs.
func failureRollsBack(t *testing.T, e *env) {
	for _, d := range []acemq.Decision{acemq.Retry(errors.New("no")), acemq.Reject(errors.New("never")), acemq.Park(errors.New("look"))} {
		runs := 0
		key := "m-" + kind(d)
		h := e.handler(&runs, func(context.Context, *sql.Tx) acemq.Decision { return d })
		if got := h(t.Context(), msg(key)); got != d {
			t.Errorf("decision %v; want the handler's %v", got, d)
		}
		if n := e.rows(e.work, key); n != 0 {
			t.Errorf("%s: %d rows of work left; want them rolled back", kind(d), n)
		}
		if r := e.claim(key, "other", time.Minute); r != idempotency.Claimed {
			t.Errorf("%s: the key is %v for another owner; want its claim forgotten", kind(d), r)
		}
	}
}

func panicRollsBack(t *testing.T, e *env) {
	runs := 0
	h := e.handler(&runs, func(context.Context, *sql.Tx) acemq.Decision { panic("the handler's bug") })
	func() {
		defer func() {
			if r := recover(); r != "the handler's bug" {
				t.Errorf("recovered %v; want the handler's panic passed on", r)
			}
		}()
		h(t.Context(), msg("m-1"))
	}()
	if n := e.rows(e.work, "m-1"); n != 0 {
		t.Errorf("%d rows of work left after the panic; want them rolled back", n)
	}
	if r := e.claim("m-1", "other", time.Minute); r != idempotency.Claimed {
		t.Errorf("the key is %v after the panic; want its claim forgotten", r)
	}
}

func inProgressIsPutBack(t *testing.T, e *env) {
	if r := e.claim("m-1", "other", time.Minute); r != idempotency.Claimed {
		t.Fatal(r)
	}
	runs := 0
	h := e.handler(&runs, accept)
	if d := h(t.Context(), msg("m-1")); kind(d) != "requeue" {
		t.Errorf("decision %v; want requeue", d)
	}
	if runs != 0 {
		t.Errorf("the handler ran for a message another owner holds")
	}
}

// A COMMIT that fails (a deferred constraint) leaves neither the work nor
// the confirmation, and forgets the claim: the retry runs the work.
func commitFailure(t *testing.T, e *env) {
	strict := e.target.Work(t)
	e.exec(fmt.Sprintf(e.target.FailAtCommit, strict))
	before := e.rows(strict, "bad")
	runs := 0
	h := e.handler(&runs, func(ctx context.Context, tx *sql.Tx) acemq.Decision {
		if err := e.insert(ctx, tx, strict, "bad"); err != nil {
			t.Errorf("the insert that fails only at commit failed at once: %v", err)
		}
		return acemq.Accept()
	})
	d := h(t.Context(), msg("m-1"))
	if kind(d) != "retry" || !strings.Contains(d.Err().Error(), "committing") {
		t.Fatalf("decision %v; want a retry that says the commit failed", d)
	}
	if n, m := e.rows(e.work, "m-1"), e.rows(strict, "bad")-before; n != 0 || m != 0 {
		t.Errorf("%d and %d rows of work left after the failed commit; want none", n, m)
	}
	if r := e.claim("m-1", "other", time.Minute); r != idempotency.Claimed {
		t.Errorf("the key is %v after the failed commit; want its claim forgotten, not confirmed", r)
	}
}

// A claim taken over while the handler ran (it outlived the claim
// timeout) cannot confirm: the work is rolled back and the message put
// back, and the new owner's claim stands.
func lostClaim(t *testing.T, e *env) {
	runs := 0
	h := must(t)(sqlstore.TxHandler(e.store, func(ctx context.Context, tx *sql.Tx, m acemq.Message[string]) acemq.Decision {
		runs++
		// Before the work's first write: SQLite's writer lock would keep
		// the other owner's claim waiting for this transaction.
		e.clock.Advance(2 * time.Minute)
		if r := e.claim("m-1", "other", time.Minute); r != idempotency.Claimed {
			t.Errorf("the other owner's takeover got %v; want claimed", r)
		}
		if err := e.insert(ctx, tx, e.work, m.Envelope.ID); err != nil {
			return acemq.Retry(err)
		}
		return acemq.Accept()
	}, idempotency.WithOwner("me"), idempotency.WithClaimTimeout(time.Minute)))
	d := h(t.Context(), msg("m-1"))
	if kind(d) != "requeue" || !errors.Is(d.Err(), sqlstore.ErrClaimLost) || !strings.Contains(d.Err().Error(), contract.IdempotencyClaimed+` by "other"`) {
		t.Fatalf("decision %v; want requeue with ErrClaimLost naming the new owner", d)
	}
	if n := e.rows(e.work, "m-1"); n != 0 {
		t.Errorf("%d rows of work left by the handler that lost its claim; want none", n)
	}
	if r := e.claim("m-1", "third", time.Minute); r != idempotency.InProgress {
		t.Errorf("the key is %v; want the new owner's claim to stand", r)
	}
}

// The same, when the new owner has already confirmed: the copy put back
// is a duplicate.
func claimConfirmedByAnother(t *testing.T, e *env) {
	runs := 0
	h := must(t)(sqlstore.TxHandler(e.store, func(ctx context.Context, tx *sql.Tx, m acemq.Message[string]) acemq.Decision {
		runs++
		e.clock.Advance(2 * time.Minute)
		other := e.open()
		if r, err := other.Claim(ctx, "m-1", "other", time.Minute); r != idempotency.Claimed || err != nil {
			t.Errorf("the other owner's takeover got %v, %v", r, err)
		}
		if err := other.Confirm(ctx, "m-1", time.Hour); err != nil {
			t.Error(err)
		}
		if err := e.insert(ctx, tx, e.work, m.Envelope.ID); err != nil {
			return acemq.Retry(err)
		}
		return acemq.Accept()
	}, idempotency.WithOwner("me"), idempotency.WithClaimTimeout(time.Minute)))
	if d := h(t.Context(), msg("m-1")); !errors.Is(d.Err(), sqlstore.ErrClaimLost) || !strings.Contains(d.Err().Error(), contract.IdempotencyConfirmed) {
		t.Fatalf("decision %v; want ErrClaimLost saying it is confirmed", d)
	}
	if d := h(t.Context(), msg("m-1")); d != acemq.Accept() || runs != 1 {
		t.Errorf("the copy put back: %v after %d runs; want accepted as a duplicate, the handler not run again", d, runs)
	}
	if n := e.rows(e.work, "m-1"); n != 0 {
		t.Errorf("%d rows of work; want none (the other owner's work is its own)", n)
	}
}

// RunWithoutKey: the work is committed, nothing recorded.
func withoutKey(t *testing.T, e *env) {
	runs := 0
	h := e.handler(&runs, accept, idempotency.RunWithoutKey())
	for range 2 {
		if d := h(t.Context(), msg("")); d != acemq.Accept() {
			t.Fatalf("decision %v", d)
		}
	}
	if runs != 2 || e.rows(e.work, "") != 2 {
		t.Errorf("runs %d, rows %d; want 2 and 2 (no deduplication without a key)", runs, e.rows(e.work, ""))
	}
	h = e.handler(&runs, accept)
	if d := h(t.Context(), msg("")); kind(d) != "park" || !errors.Is(d.Err(), idempotency.ErrNoKey) {
		t.Errorf("decision %v without RunWithoutKey; want parked with ErrNoKey", d)
	}
}
