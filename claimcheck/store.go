package claimcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
)

// Store holds offloaded payloads by key. The codec calls Put when it
// publishes and Get when it reads; it never calls Delete.
type Store interface {
	// Put keeps payload and returns the key to fetch it by: non-empty
	// UTF-8, unique to this payload (the built-in stores use UUIDs).
	Put(ctx context.Context, payload []byte) (key string, err error)
	// Get returns the payload kept under key. A key the store does not
	// hold must be an error matching ErrNotFound, and one it can never
	// hold an error matching ErrInvalidKey: the codec parks the message
	// then. Every other error is taken for the store being out of reach,
	// and the message is retried.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes the payload under key; a key already gone is not an
	// error.
	Delete(ctx context.Context, key string) error
}

// ErrNotFound is matched (errors.Is) by the error of Get for a key the
// store does not hold.
var ErrNotFound = errors.New("claimcheck: no payload under this key")

// ErrInvalidKey is matched by the error for a key that a store can never
// hold, such as one that would not be a plain file name in a Dir.
var ErrInvalidKey = errors.New("claimcheck: invalid key")

// notFound is the error of Get for key.
func notFound(key string) error { return fmt.Errorf("%w %q", ErrNotFound, key) }

// Memory is a Store in the process, safe for concurrent use; its zero value
// is empty and ready. What it holds is gone when the process ends.
type Memory struct {
	mu       sync.Mutex
	payloads map[string][]byte
}

// Put implements Store: the key is a new UUID, and payload is copied.
func (m *Memory) Put(ctx context.Context, payload []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	key := uuid.NewString()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.payloads == nil {
		m.payloads = map[string][]byte{}
	}
	m.payloads[key] = bytes.Clone(payload)
	return key, nil
}

// Get implements Store; the payload returned is the caller's copy.
func (m *Memory) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.payloads[key]
	if !ok {
		return nil, notFound(key)
	}
	return bytes.Clone(p), nil
}

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.payloads, key)
	return nil
}

// Len is how many payloads the store holds.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.payloads)
}
