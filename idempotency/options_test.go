package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/idempotency"
)

// A caller's bad input is Handler's and Wrap's error, naming what was
// wrong, never a panic.
func TestBadInputIsAnError(t *testing.T) {
	accept := func(context.Context, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	run := func(context.Context, idempotency.Held, acemq.Message[string]) acemq.Decision { return acemq.Accept() }
	store := idempotency.NewMemory(nil)
	for _, c := range []struct {
		name    string
		make    func() (acemq.Handler[string], error)
		want    string
		invalid bool // matches idempotency.ErrInvalid
	}{
		{"no store", func() (acemq.Handler[string], error) { return idempotency.Handler(nil, accept) }, "needs a store", false},
		{"no handler", func() (acemq.Handler[string], error) { return idempotency.Handler[string](store, nil) }, "needs a handler", false},
		{"no runner", func() (acemq.Handler[string], error) { return idempotency.Wrap[string](store, nil) }, "needs a runner", false},
		{"no key function", func() (acemq.Handler[string], error) {
			return idempotency.Handler(store, accept, idempotency.WithKey(nil))
		}, "WithKey(nil)", false},
		{"an empty owner", func() (acemq.Handler[string], error) {
			return idempotency.Handler(store, accept, idempotency.WithOwner(""))
		}, `WithOwner("")`, true},
		{"an owner too long", func() (acemq.Handler[string], error) {
			return idempotency.Wrap(store, run, idempotency.WithOwner(strings.Repeat("o", 65)))
		}, "WithOwner", true},
		{"a claim timeout of 0", func() (acemq.Handler[string], error) {
			return idempotency.Handler(store, accept, idempotency.WithClaimTimeout(0))
		}, "WithClaimTimeout(0s)", true},
		{"a negative retention", func() (acemq.Handler[string], error) {
			return idempotency.Handler(store, accept, idempotency.WithRetention(-time.Hour))
		}, "WithRetention(-1h0m0s)", true},
		{"no claim function", func() (acemq.Handler[string], error) {
			return idempotency.Handler(store, accept, idempotency.OnClaim(nil))
		}, "OnClaim(nil)", false},
		{"a nil option", func() (acemq.Handler[string], error) {
			return idempotency.Handler(store, accept, idempotency.RunWithoutKey(), nil)
		}, "option 2 is nil", false},
	} {
		h, err := c.make()
		if h != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: handler %v, error %v; want no handler and an error saying %q", c.name, h != nil, err, c.want)
		}
		if errors.Is(err, idempotency.ErrInvalid) != c.invalid {
			t.Errorf("%s: %v matches ErrInvalid: %t, want %t", c.name, err, !c.invalid, c.invalid)
		}
	}
	if h, err := idempotency.Handler(store, accept, idempotency.WithOwner("worker-1"), idempotency.WithClaimTimeout(time.Minute),
		idempotency.WithRetention(time.Hour), idempotency.RunWithoutKey(), idempotency.OnClaim(func(string, idempotency.Result) {})); h == nil || err != nil {
		t.Errorf("valid options: handler %v, error %v", h != nil, err)
	}
}
