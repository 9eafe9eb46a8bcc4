package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/idempotency"
)

// ErrClaimLost is matched (errors.Is) by the error of a message whose claim
// the handler no longer held when its transaction came to confirm it: the
// claim outlived the claim timeout and another consumer took it over (or
// confirmed it). The work was rolled back and the message put back
// (acemq.Requeue): the consumer holding it now does the work.
var ErrClaimLost = errors.New("idempotency: the claim was lost before the work could be confirmed")

// TxFunc is a handler whose work is written through tx, the database
// transaction that also confirms the message: the work is committed if and
// only if the message is confirmed. It must not commit or roll back tx.
type TxFunc[T any] func(ctx context.Context, tx *sql.Tx, m acemq.Message[T]) acemq.Decision

// TxHandler wraps h so that its work is done exactly once per key, when
// that work is rows in the store's database: it claims the key as
// idempotency.Handler does (a duplicate is accepted, a copy another
// consumer holds is put back, a store error retries), then
//
//  1. begins a transaction and runs h in it;
//  2. if h accepts, confirms the key in the same transaction, on condition
//     that the claim is still this handler's (claimed_by is its owner and
//     the state CLAIMED), and commits;
//  3. only then accepts the message.
//
// A process that dies before the commit leaves nothing of the work: the
// transaction rolls back, the claim expires and another consumer takes the
// message over and does the work once. A claim taken over while h ran
// (h outlived the claim timeout) cannot confirm: the work is rolled back and
// the message put back (ErrClaimLost). A failed commit forgets the claim
// and retries the message: if the commit did go through after all, the
// next copy is a duplicate; if it did not, it runs again. If h retries,
// rejects, parks or panics, the work is rolled back and the claim forgotten.
//
// The transaction is begun in the store's database (DB), so the work's
// tables must live there; it is not cancelled by a shutdown's cancellation
// of the delivery's context (h's own statements are, if h passes them
// ctx). For a pgx pool, make the store on stdlib.OpenDBFromPool(pool): h
// gets a *sql.Tx of the pool's connections.
//
// It returns an error, and no handler, if s or h is nil or an option is
// invalid.
func TxHandler[T any](s *Store, h TxFunc[T], opts ...idempotency.Option) (acemq.Handler[T], error) {
	switch {
	case s == nil:
		return nil, errors.New("idempotency: TxHandler needs a store, not nil")
	case h == nil:
		return nil, errors.New("idempotency: TxHandler needs a handler, not nil")
	}
	return idempotency.Wrap(claimsAlone{s}, func(ctx context.Context, held idempotency.Held, m acemq.Message[T]) acemq.Decision {
		return runTx(ctx, s, held, h, m)
	}, opts...)
}

// runTx is TxHandler's Runner.
func runTx[T any](ctx context.Context, s *Store, held idempotency.Held, h TxFunc[T], m acemq.Message[T]) (d acemq.Decision) {
	key := held.Key
	after, cancel := idempotency.AfterHandler(ctx)
	defer cancel()
	forget := func() {
		if key != "" {
			// A failed forget leaves the claim to expire: the retry is
			// put back until then, never lost.
			_ = s.Forget(after, key, held.Owner)
		}
	}
	tx, err := s.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		forget()
		return acemq.Retry(fmt.Errorf("idempotency: beginning the transaction for %q in %s: %w", key, s.d, err))
	}
	done := false
	defer func() {
		if !done { // h panicked: undo its work, release the claim, let the consumer see the panic
			_ = tx.Rollback()
			forget()
		}
	}()
	d = h(ctx, tx, m)
	done = true
	if d != acemq.Accept() {
		_ = tx.Rollback()
		forget()
		return d
	}
	if key != "" { // a message without a key (RunWithoutKey) records nothing
		if err := s.confirmHeld(after, tx, held); err != nil {
			_ = tx.Rollback()
			if errors.Is(err, ErrClaimLost) {
				return acemq.Requeue(err)
			}
			forget()
			return acemq.Retry(fmt.Errorf("idempotency: the handler accepted %q but confirming it failed; its work was rolled back, so it will run again: %w", key, err))
		}
	}
	if err := tx.Commit(); err != nil {
		forget() // leaves a committed confirmation alone
		return acemq.Retry(fmt.Errorf("idempotency: committing the work and the confirmation of %q failed, so the message is retried "+
			"(a duplicate if the commit went through after all, run again if not): %w", key, err))
	}
	return d
}

// confirmHeld confirms held's key in tx, on condition that held's owner
// still holds its claim; ErrClaimLost, with what holds the row now, if not.
func (s *Store) confirmHeld(ctx context.Context, tx *sql.Tx, held idempotency.Held) error {
	now := s.now()
	res, err := tx.ExecContext(ctx, s.confirmClaim, s.d.time(now), s.d.time(now.Add(held.Retention)), held.Key, held.Owner)
	if err != nil {
		return fmt.Errorf("idempotency: confirm %q in table %s: %w", held.Key, s.table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("idempotency: confirm %q in table %s: %w", held.Key, s.table, err)
	}
	if n == 1 {
		return nil
	}
	rec, err := s.read(ctx, tx, held.Key)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %q is no longer in table %s (forgotten or pruned)", ErrClaimLost, held.Key, s.table)
	case err != nil:
		return fmt.Errorf("%w: %q is no longer claimed by %s: %w", ErrClaimLost, held.Key, held.Owner, err)
	}
	return fmt.Errorf("%w: %q is %s by %q until %s, not claimed by %s", ErrClaimLost, held.Key, rec.State, rec.Owner,
		rec.Expires.UTC().Format(time.RFC3339Nano), held.Owner)
}
