package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/handoff"
)

// ErrNoKey is matched (errors.Is) by the error a message is parked with
// when it has no key (no message id), unless RunWithoutKey is given.
var ErrNoKey = errors.New("idempotency: the message has no id to deduplicate it by")

// storeTimeout bounds a confirm or forget after the handler has run: they
// are not bound by the delivery's context, which a shutdown cancels, since
// what the handler did must still be recorded.
const storeTimeout = 30 * time.Second

// Held is a claimed message's key as the handler holds it: what a Runner
// needs to confirm or forget the claim.
type Held struct {
	Key   string
	Owner string
	// Retention is how long a confirmation lasts (WithRetention).
	Retention time.Duration
}

// A Runner handles a message whose key held has claimed, and settles the
// claim: it confirms it if the message was handled (and returns
// acemq.Accept), or forgets it otherwise, so that the next copy runs.
// Handler's runner calls the handler, then Store.Confirm or Store.Forget;
// sqlstore.TxHandler's does the handler's work and the confirm in one
// database transaction. A message without a key, which RunWithoutKey runs,
// comes with a zero Held: it is handled without anything recorded.
type Runner[T any] func(ctx context.Context, held Held, m acemq.Message[T]) acemq.Decision

// Handler wraps h so that it runs once per key:
//
//   - it claims the key; a store error retries the message (acemq.Retry);
//   - a key already confirmed is a duplicate: accepted, h not run;
//   - a key another owner holds is put back unchanged (acemq.Requeue, no
//     attempt spent) until that owner confirms, forgets, or its claim
//     expires and this one takes over;
//   - otherwise h runs. If it accepts, the key is confirmed; if the confirm
//     fails, the message is retried rather than lost, and so h will run
//     again for it (once the claim is released or has expired): the one
//     duplicate run an idempotent consumer can still make, the price of
//     never losing a message. If h retries, rejects, parks or panics, the
//     claim is forgotten so that the next copy runs, and h's decision (or
//     panic) is passed on.
//
// It returns an error, and no handler, if store or h is nil or an option
// is invalid.
func Handler[T any](store Store, h acemq.Handler[T], opts ...Option) (acemq.Handler[T], error) {
	if h == nil {
		return nil, errors.New("idempotency: Handler needs a handler, not nil")
	}
	if store == nil {
		return nil, errors.New("idempotency: Handler needs a store, not nil")
	}
	flying := &inFlight{Store: store}
	return Wrap(flying, func(ctx context.Context, held Held, m acemq.Message[T]) acemq.Decision {
		return run(ctx, flying, held, h, m)
	}, opts...)
}

// Wrap is Handler with the step after the claim given: it finds the key,
// claims it, accepts a duplicate, puts back a copy another owner holds, and
// retries on a store error, as Handler does; a message it claimed goes to
// run, which must confirm or forget the claim. It is for a store whose
// confirm is part of the handler's work (sqlstore.TxHandler); Handler is
// the one to use otherwise.
//
// It returns an error, and no handler, if store or run is nil or an option
// is invalid.
func Wrap[T any](store Store, run Runner[T], opts ...Option) (acemq.Handler[T], error) {
	switch {
	case store == nil:
		return nil, errors.New("idempotency: Handler needs a store, not nil")
	case run == nil:
		return nil, errors.New("idempotency: Wrap needs a runner, not nil")
	}
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	used := &usage{}
	return func(ctx context.Context, m acemq.Message[T]) acemq.Decision {
		used.in(ctx)
		key := o.key(m.Envelope)
		if key == "" {
			if o.runWithout {
				return run(ctx, Held{}, m)
			}
			return acemq.Park(ErrNoKey)
		}
		if err := CheckKey(key); err != nil {
			return acemq.Park(err) // no copy of it will ever fit either
		}
		res, err := store.Claim(ctx, key, o.owner, o.timeout)
		if err != nil {
			return acemq.Retry(fmt.Errorf("idempotency: claiming %q: %w", key, err))
		}
		if o.onClaim != nil {
			o.onClaim(key, res)
		}
		switch res {
		case Confirmed:
			return acemq.Accept()
		case InProgress:
			return acemq.Requeue(fmt.Errorf("idempotency: %q is being handled by another consumer", key))
		case Claimed:
		default:
			return acemq.Retry(fmt.Errorf("idempotency: claiming %q: the store answered %v", key, res))
		}
		return run(ctx, Held{Key: key, Owner: o.owner, Retention: o.retention}, m)
	}, nil
}

// run is Handler's Runner. A message without a key (RunWithoutKey) comes
// with a zero held: h runs, and nothing is recorded. Run by a consumer,
// the confirm is handed over to it (internal/handoff): the handler's place
// takes the next delivery, whose claim can then go to the store with this
// confirm, and the consumer acks once the confirm is made, or retries the
// message if it failed, as run would have.
func run[T any](ctx context.Context, store *inFlight, held Held, h acemq.Handler[T], m acemq.Message[T]) (d acemq.Decision) {
	if held.Key == "" {
		return h(ctx, m)
	}
	key := held.Key
	after, cancel := AfterHandler(ctx)
	handedOver := false
	defer func() {
		if !handedOver {
			cancel()
		}
	}()
	done := false
	defer func() {
		if !done { // h panicked: release the claim, then let the consumer see the panic
			_ = store.Forget(after, key, held.Owner)
		}
	}()
	d = h(ctx, m)
	done = true
	if d != acemq.Accept() {
		// A failed forget leaves the claim to expire: the retry is put back
		// until then, never lost.
		_ = store.Forget(after, key, held.Owner)
		return d
	}
	confirmed := store.begin(key)
	confirm := func() error {
		defer confirmed()
		if err := store.Confirm(after, key, held.Retention); err != nil {
			return fmt.Errorf("idempotency: the handler accepted %q but confirming it failed, so it will run again: %w", key, err)
		}
		return nil
	}
	if handoff.Offer(ctx, func() error { defer cancel(); return confirm() }) {
		handedOver = true
		return d
	}
	if err := confirm(); err != nil {
		return acemq.Retry(err)
	}
	return d
}

// AfterHandler is the context a Runner records a handler's outcome in (a
// confirm, a forget, a commit): ctx's values without its cancellation,
// which a shutdown brings, since what the handler did must still be
// recorded; bounded by a timeout of its own instead.
func AfterHandler(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
}

func defaultOwner() string {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	suffix := fmt.Sprintf(":%d:%s", os.Getpid(), hex.EncodeToString(b[:]))
	if r := []rune(host); len(r)+len(suffix) > contract.IdempotencyMaxOwner {
		host = string(r[:contract.IdempotencyMaxOwner-len(suffix)])
	}
	return host + suffix
}
