package idempotency

import (
	"errors"
	"fmt"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
)

type options struct {
	key        func(acemq.Envelope) string
	owner      string
	timeout    time.Duration
	retention  time.Duration
	runWithout bool
	onClaim    func(key string, r Result)
}

// Option configures Handler (and Wrap, sqlstore.TxHandler). An option
// given a value it cannot take makes the constructor return an error
// naming it.
type Option func(*options) error

// WithKey takes the key from the envelope with key (default: the message
// id, Envelope.ID). A key of "" is a message without one (RunWithoutKey).
func WithKey(key func(acemq.Envelope) string) Option {
	return func(o *options) error {
		if key == nil {
			return errors.New("idempotency: WithKey(nil): want a key function")
		}
		o.key = key
		return nil
	}
}

// WithOwner names the claims' owner (claimed_by, at most 64 characters).
// The default is the host name, the process id and a random suffix, one
// per Handler: an owner releases only its own claims, so no two handlers
// may share one.
func WithOwner(owner string) Option {
	return func(o *options) error {
		if err := CheckOwner(owner); err != nil {
			return fmt.Errorf("idempotency: WithOwner(%q): %w", owner, err)
		}
		o.owner = owner
		return nil
	}
}

// WithClaimTimeout is how long a claim holds (default
// contract.DefaultClaimTimeout, 5 minutes): longer than the handler ever
// runs, since after it another consumer takes the message over.
func WithClaimTimeout(d time.Duration) Option {
	return func(o *options) error {
		if err := CheckDuration("claim timeout", d); err != nil {
			return fmt.Errorf("idempotency: WithClaimTimeout(%v): %w", d, err)
		}
		o.timeout = d
		return nil
	}
}

// WithRetention is how long a handled message is remembered (default
// contract.DefaultIdempotencyRetention, 24 hours): a copy within it is a
// duplicate.
func WithRetention(d time.Duration) Option {
	return func(o *options) error {
		if err := CheckDuration("retention", d); err != nil {
			return fmt.Errorf("idempotency: WithRetention(%v): %w", d, err)
		}
		o.retention = d
		return nil
	}
}

// RunWithoutKey runs the handler, without deduplication, for a message that
// has no key. Without it such a message is parked (ErrNoKey): a consumer
// that was made idempotent should not quietly stop being so.
func RunWithoutKey() Option { return func(o *options) error { o.runWithout = true; return nil } }

// OnClaim calls f with the result of each claim the handler makes (not
// with a store's error): Confirmed is a duplicate the store absorbed,
// InProgress a copy put back because another consumer holds it, Claimed a
// message the handler runs. For counting them: f must be quick and safe
// for concurrent use.
func OnClaim(f func(key string, r Result)) Option {
	return func(o *options) error {
		if f == nil {
			return errors.New("idempotency: OnClaim(nil): want a function")
		}
		o.onClaim = f
		return nil
	}
}

// newOptions applies opts over the defaults; the first invalid one is the
// error.
func newOptions(opts []Option) (options, error) {
	o := options{
		key:       func(e acemq.Envelope) string { return e.ID },
		timeout:   contract.DefaultClaimTimeout,
		retention: contract.DefaultIdempotencyRetention,
	}
	for i, opt := range opts {
		if opt == nil {
			return o, fmt.Errorf("idempotency: option %d is nil", i+1)
		}
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if o.owner == "" {
		o.owner = defaultOwner()
		if err := CheckOwner(o.owner); err != nil { // a host name that is not UTF-8
			return o, fmt.Errorf("idempotency: the default owner %q: %w (name one with WithOwner)", o.owner, err)
		}
	}
	return o, nil
}
