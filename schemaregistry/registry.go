// Package schemaregistry keeps the Avro schemas that registered Avro bodies
// name by id (the Confluent framing: a zero byte, the id as 4 bytes
// big-endian, the body). The AceMQ family's rule (docs/contract.md): ids
// from 1, a definition registered twice gets the id it had, recognised by
// the SHA-256 fingerprint of its text, and an unknown id is a clear error
// naming it. Memory is the in-process registry; package
// schemaregistry/sqlregistry keeps them in SQLite or PostgreSQL.
package schemaregistry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// ErrUnknownSchema is matched (errors.Is) by the error for an id the
// registry does not hold.
var ErrUnknownSchema = errors.New("schema registry: unknown schema id")

// Registry gives schemas ids and back.
type Registry interface {
	// Register returns the id of definition, registering it first when it
	// is new.
	Register(ctx context.Context, definition string) (id uint32, err error)
	// Schema returns the definition of id; an unknown id is an error
	// matching ErrUnknownSchema that names it.
	Schema(ctx context.Context, id uint32) (definition string, err error)
}

// Fingerprint is how a definition is recognised: the hex SHA-256 of its
// text, as it was registered.
func Fingerprint(definition string) string {
	sum := sha256.Sum256([]byte(definition))
	return hex.EncodeToString(sum[:])
}

// Unknown is the error for an id a registry does not hold.
func Unknown(id uint32) error { return fmt.Errorf("%w %d", ErrUnknownSchema, id) }

// Memory is a Registry in the process, safe for concurrent use; its zero
// value is empty and ready.
type Memory struct {
	mu   sync.Mutex
	defs []string          // defs[i] has id i+1
	ids  map[string]uint32 // by fingerprint
}

// Register implements Registry.
func (m *Memory) Register(_ context.Context, definition string) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fp := Fingerprint(definition)
	if id, ok := m.ids[fp]; ok {
		return id, nil
	}
	if m.ids == nil {
		m.ids = map[string]uint32{}
	}
	m.defs = append(m.defs, definition)
	id := uint32(len(m.defs))
	m.ids[fp] = id
	return id, nil
}

// Schema implements Registry.
func (m *Memory) Schema(_ context.Context, id uint32) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == 0 || int(id) > len(m.defs) {
		return "", Unknown(id)
	}
	return m.defs[id-1], nil
}
