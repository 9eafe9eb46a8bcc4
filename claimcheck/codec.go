package claimcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/option"
)

// DefaultThreshold is the size from which a payload is offloaded: one
// shorter than it travels inline.
const DefaultThreshold = contract.ClaimCheckDefaultThreshold

// DefaultTimeout is how long each store call of the codec may take.
const DefaultTimeout = 30 * time.Second

// ErrMalformed is matched by the error of a framed body that cannot be
// read: an offloaded one whose key is empty or not UTF-8.
var ErrMalformed = errors.New("claimcheck: malformed body")

// ErrInvalidOption is matched by New's and NewDir's error for an option out
// of range.
var ErrInvalidOption = errors.New("claimcheck: invalid option")

// Option configures New.
type Option func(*Codec) error

// WithThreshold offloads every payload of at least n bytes, once the inner
// codec has encoded it; 0 offloads every payload. A negative n is refused.
func WithThreshold(n int) Option {
	return func(c *Codec) error {
		if n < 0 {
			return fmt.Errorf("%w: the threshold is %d bytes; it must be at least 0 (0 offloads every payload)", ErrInvalidOption, n)
		}
		c.threshold = n
		return nil
	}
}

// WithTimeout bounds each store call (Put when marshalling, Get when
// unmarshalling) to d, which must be positive.
func WithTimeout(d time.Duration) Option {
	return func(c *Codec) error {
		if d <= 0 {
			return fmt.Errorf("%w: the store timeout is %v; it must be positive", ErrInvalidOption, d)
		}
		c.timeout = d
		return nil
	}
}

// Codec is the claim-check codec: an acemq.Codec that frames its inner
// codec's bodies and offloads large ones to its Store. It is safe for
// concurrent use.
type Codec struct {
	inner     acemq.Codec
	store     Store
	threshold int
	timeout   time.Duration
}

var _ acemq.Codec = (*Codec)(nil)

// New wraps inner, offloading to store every encoded payload of at least
// DefaultThreshold bytes, each store call bounded by DefaultTimeout, unless
// opts say otherwise.
func New(inner acemq.Codec, store Store, opts ...Option) (*Codec, error) {
	if inner == nil || store == nil {
		return nil, fmt.Errorf("%w: New needs an inner codec and a store", ErrInvalidOption)
	}
	c := &Codec{inner: inner, store: store, threshold: DefaultThreshold, timeout: DefaultTimeout}
	if err := option.ApplyFuncs(c, opts); errors.Is(err, option.ErrNil) {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	} else if err != nil {
		return nil, err
	}
	return c, nil
}

// ContentType is the inner codec's.
func (c *Codec) ContentType() string { return c.inner.ContentType() }

// Reads is the inner codec's.
func (c *Codec) Reads(contentType string) bool { return c.inner.Reads(contentType) }

// Marshal encodes v with the inner codec and frames it: inline when shorter
// than the threshold, otherwise put in the store and sent as its key. A
// failing store fails the publish, with the store's error wrapped.
func (c *Codec) Marshal(v any) ([]byte, error) {
	payload, err := c.inner.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(payload) < c.threshold {
		return frame(contract.ClaimCheckInline, payload), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	key, err := c.store.Put(ctx, payload)
	if err != nil {
		return nil, fmt.Errorf("claimcheck: offloading a payload of %d bytes: %w", len(payload), err)
	}
	if key == "" || !utf8.ValidString(key) {
		return nil, fmt.Errorf("claimcheck: offloading a payload of %d bytes: the store returned the key %q, which is not non-empty UTF-8", len(payload), key)
	}
	return frame(contract.ClaimCheckOffloaded, []byte(key)), nil
}

// Unmarshal reads a framed body: an inline payload as it is, an offloaded
// one from the store, each decoded by the inner codec; a body without the
// framing is the inner codec's as it is. A key the store does not hold is a
// fatal error naming the key and saying the store's retention was too short
// (matching ErrNotFound); any other store error is marked acemq.Temporary.
func (c *Codec) Unmarshal(contentType string, data []byte, v any) error {
	marker, rest, framed := parse(data)
	switch {
	case !framed:
		return c.inner.Unmarshal(contentType, data, v)
	case marker == contract.ClaimCheckInline:
		return c.inner.Unmarshal(contentType, rest, v)
	}
	key, err := offloadedKey(rest)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	payload, err := c.store.Get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return acemq.Fatal(fmt.Errorf("%w; %s", namingKey(key, err), contract.ClaimCheckRetention))
	case errors.Is(err, ErrInvalidKey):
		return acemq.Fatal(namingKey(key, err))
	case err != nil:
		return acemq.Temporary(fmt.Errorf("claimcheck: fetching the payload under key %q: %w", key, err))
	}
	if err := c.inner.Unmarshal(contentType, payload, v); err != nil {
		return fmt.Errorf("claimcheck: the payload under key %q: %w", key, err)
	}
	return nil
}

// frame is the framing with marker, then rest.
func frame(marker byte, rest []byte) []byte {
	b := make([]byte, 0, 3+len(rest))
	b = append(b, contract.ClaimCheckMagic, contract.ClaimCheckVersion, marker)
	return append(b, rest...)
}

// parse splits a framed body into its marker and what follows; framed is
// false for a body that is not one, which is the inner codec's as it is.
// Only the two markers frame a body: 0xAC 0x01 followed by anything else is
// no claim check.
func parse(body []byte) (marker byte, rest []byte, framed bool) {
	if len(body) < 3 || body[0] != contract.ClaimCheckMagic || body[1] != contract.ClaimCheckVersion {
		return 0, nil, false
	}
	switch body[2] {
	case contract.ClaimCheckInline, contract.ClaimCheckOffloaded:
		return body[2], body[3:], true
	}
	return 0, nil, false
}

// offloadedKey is the key an offloaded body carries.
func offloadedKey(rest []byte) (string, error) {
	if len(rest) == 0 {
		return "", acemq.Fatal(fmt.Errorf("%w: an offloaded body without a key", ErrMalformed))
	}
	if !utf8.Valid(rest) {
		return "", acemq.Fatal(fmt.Errorf("%w: an offloaded body whose key %q is not UTF-8", ErrMalformed, rest))
	}
	return string(rest), nil
}

// namingKey is err, with key named unless the store's text names it.
func namingKey(key string, err error) error {
	if strings.Contains(err.Error(), key) {
		return err
	}
	return fmt.Errorf("claimcheck: key %q: %w", key, err)
}
