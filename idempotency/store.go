// Package idempotency is the idempotent consumer of CONTRACT.md section 16:
// a handler wrapped with Handler runs once per message id, however many
// copies of the message arrive (a publisher's retry after a lost confirm,
// a replay from Q.dlq, a redelivery after a lost ack), for as long as the
// store remembers it (24 hours by default).
//
// A Store records, per key, a claim (a consumer is handling the message
// now) or a confirmation (it was handled). Memory keeps them in the
// process; package idempotency/sqlstore keeps them in a SQL table whose
// columns are the Java and Ruby libraries' own, so that services written
// in either share it with Go ones. Each store is a package of its own,
// like every store and format of this module, so that a program links and
// downloads only the database driver it imports.
package idempotency

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acemq-go/acemq/contract"
)

// Result is what Claim found.
type Result uint8

const (
	// Claimed: the caller holds the key now, and handles the message.
	Claimed Result = iota + 1
	// InProgress: another owner holds an unexpired claim on the key.
	InProgress
	// Confirmed: the message was handled; this copy is a duplicate.
	Confirmed
)

func (r Result) String() string {
	switch r {
	case Claimed:
		return "claimed"
	case InProgress:
		return "in progress"
	case Confirmed:
		return "confirmed"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Store records the claims and confirmations of message keys. Its methods
// are safe for concurrent use, by goroutines and (for a shared store) by
// processes: of the owners claiming one key at once, exactly one is given
// Claimed.
type Store interface {
	// Claim claims key for owner until timeout has passed: an insert, or a
	// takeover of a row (claimed or confirmed) whose expiry has passed.
	// Otherwise it reports what holds the key: InProgress or Confirmed.
	Claim(ctx context.Context, key, owner string, timeout time.Duration) (Result, error)
	// Confirm marks key handled, remembered for retention from now.
	Confirm(ctx context.Context, key string, retention time.Duration) error
	// Forget releases owner's claim on key (after a handler failed), so
	// that the next copy is handled; a claim owner no longer holds (taken
	// over, confirmed) is left alone.
	Forget(ctx context.Context, key, owner string) error
	// Prune deletes the rows expired at now, and says how many.
	Prune(ctx context.Context, now time.Time) (int64, error)
}

// ErrInvalid is matched (errors.Is) by the error of a key or owner a store
// cannot hold: empty, not UTF-8, or longer than its column.
var ErrInvalid = errors.New("idempotency: invalid key or owner")

// CheckKey says whether key fits the message_id column:
// 1 to contract.IdempotencyMaxKey characters of UTF-8.
func CheckKey(key string) error {
	return check("key", key, contract.IdempotencyMaxKey)
}

// CheckOwner says whether owner fits the claimed_by column:
// 1 to contract.IdempotencyMaxOwner characters of UTF-8.
func CheckOwner(owner string) error {
	return check("owner", owner, contract.IdempotencyMaxOwner)
}

func check(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: the %s is empty", ErrInvalid, what)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: the %s is not UTF-8", ErrInvalid, what)
	case utf8.RuneCountInString(s) > max:
		return fmt.Errorf("%w: the %s is %d characters, more than %d", ErrInvalid, what, utf8.RuneCountInString(s), max)
	}
	return nil
}

// CheckDuration refuses a claim timeout or retention that is not positive:
// a row that expires as it is written records nothing.
func CheckDuration(what string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%w: the %s is %v, not positive", ErrInvalid, what, d)
	}
	return nil
}

// Memory is a Store in the process, for one consumer process or a test: its
// records go with it. The zero Memory is ready, on the system clock.
type Memory struct {
	// Clock, when set, is the store's time (a test's manual clock).
	Clock func() time.Time

	mu   sync.Mutex
	rows map[string]row
}

type row struct {
	state   string
	owner   string
	expires time.Time
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory on clock (time.Now when nil).
func NewMemory(clock func() time.Time) *Memory { return &Memory{Clock: clock} }

func (m *Memory) now() time.Time {
	if m.Clock != nil {
		return m.Clock()
	}
	return time.Now()
}

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, key, owner string, timeout time.Duration) (Result, error) {
	if err := errors.Join(CheckKey(key), CheckOwner(owner), CheckDuration("claim timeout", timeout)); err != nil {
		return 0, err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.rows[key]; ok && now.Before(r.expires) {
		if r.state == contract.IdempotencyConfirmed {
			return Confirmed, nil
		}
		return InProgress, nil
	}
	if m.rows == nil {
		m.rows = map[string]row{}
	}
	m.rows[key] = row{state: contract.IdempotencyClaimed, owner: owner, expires: now.Add(timeout)}
	return Claimed, nil
}

// Confirm implements Store.
func (m *Memory) Confirm(_ context.Context, key string, retention time.Duration) error {
	if err := errors.Join(CheckKey(key), CheckDuration("retention", retention)); err != nil {
		return err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows == nil {
		m.rows = map[string]row{}
	}
	r := m.rows[key]
	m.rows[key] = row{state: contract.IdempotencyConfirmed, owner: r.owner, expires: now.Add(retention)}
	return nil
}

// Forget implements Store.
func (m *Memory) Forget(_ context.Context, key, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.rows[key]; ok && r.state == contract.IdempotencyClaimed && r.owner == owner {
		delete(m.rows, key)
	}
	return nil
}

// Prune implements Store.
func (m *Memory) Prune(_ context.Context, now time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for k, r := range m.rows {
		if !now.Before(r.expires) {
			delete(m.rows, k)
			n++
		}
	}
	return n, nil
}

// Keys lists the keys the store holds, expired or not, in order: for tests.
func (m *Memory) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
