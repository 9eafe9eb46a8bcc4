package avro

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	hamba "github.com/hamba/avro/v2"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/schemaregistry"
)

// registryTimeout bounds a registry call: Codec methods take no context,
// and a delivery must not wait on a registry that hangs.
const registryTimeout = 10 * time.Second

// RegisteredCodec is the Avro codec of a schema registry: it writes its
// schema's id before each body and reads a body by the id it carries.
// It is safe for concurrent use.
type RegisteredCodec struct {
	text   string
	schema hamba.Schema
	reg    schemaregistry.Registry

	mu      sync.Mutex
	id      uint32                  // 0 until the first write registers it
	writers map[uint32]hamba.Schema // by writer's id: the writer's schema resolved to ours
}

// Registered returns the codec that writes and reads schema, an Avro schema
// in JSON, through reg. The schema is registered as it is given (the
// registry recognises a definition by its text), on the first write.
func Registered(schema string, reg schemaregistry.Registry) (*RegisteredCodec, error) {
	if reg == nil {
		return nil, errors.New("acemq: avro codec: the registry is nil")
	}
	s, err := parse(schema)
	if err != nil {
		return nil, fmt.Errorf("acemq: avro codec: the schema: %w", err)
	}
	return &RegisteredCodec{text: schema, schema: s, reg: reg, writers: map[uint32]hamba.Schema{}}, nil
}

// ContentType is application/vnd.acemq.avro.
func (c *RegisteredCodec) ContentType() string { return contract.ContentTypeAvroRegistered }

// Reads takes application/vnd.acemq.avro, application/avro and any
// */*+avro, ignoring case and parameters; never avro/binary (nor any
// avro/*), never a message without a content type.
func (c *RegisteredCodec) Reads(contentType string) bool {
	mt, ok := mediaType(contentType)
	return ok && (mt == contract.ContentTypeAvroRegistered || sharedType(mt))
}

// Marshal writes v as Avro of the schema, framed with its id. The first
// write registers the schema; an error doing so matches
// ErrRegistryUnreachable, and the next write tries again.
func (c *RegisteredCodec) Marshal(v any) ([]byte, error) {
	id, err := c.register()
	if err != nil {
		return nil, err
	}
	body, err := encode(c.schema, v)
	if err != nil {
		return nil, err
	}
	return frame(id, body), nil
}

func (c *RegisteredCodec) register() (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id != 0 {
		return c.id, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	id, err := c.reg.Register(ctx, c.text)
	if err != nil {
		return 0, fmt.Errorf("acemq: %w: registering %s: %w", ErrRegistryUnreachable, name(c.schema), err)
	}
	c.id = id
	return id, nil
}

// Unmarshal reads a framed body into v, a pointer, through the writer's
// schema resolved to the codec's. Its errors: ErrNotFramed, ErrTruncated,
// ErrTrailingBytes, an unknown id (matching schemaregistry.ErrUnknownSchema
// and naming the id: the message is parked), ErrIncompatible, and
// ErrRegistryUnreachable, marked acemq.Temporary (the message is retried
// under the consumer's policy).
func (c *RegisteredCodec) Unmarshal(_ string, data []byte, v any) error {
	id, body, err := unframe(data)
	if err != nil {
		return err
	}
	schema, err := c.writer(id)
	if err != nil {
		return err
	}
	if err := decode(schema, body, v); err != nil {
		return fmt.Errorf("schema id %d: %w", id, err)
	}
	return nil
}

// writer returns the schema that reads a body written with id: the
// writer's resolved to the codec's. Ids do not change, so it is kept.
func (c *RegisteredCodec) writer(id uint32) (hamba.Schema, error) {
	c.mu.Lock()
	s, ok := c.writers[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	def, err := c.reg.Schema(ctx, id)
	switch {
	case errors.Is(err, schemaregistry.ErrUnknownSchema):
		return nil, fmt.Errorf("acemq: avro codec: the writer's schema id %d is not in the registry: %w", id, err)
	case err != nil:
		return nil, acemq.Temporary(fmt.Errorf("acemq: %w: looking up schema id %d: %w", ErrRegistryUnreachable, id, err))
	}
	w, err := parse(def)
	if err != nil {
		return nil, fmt.Errorf("acemq: avro codec: the registry's schema id %d does not parse: %w", id, err)
	}
	s = c.schema
	if w.Fingerprint() != c.schema.Fingerprint() {
		if s, err = hamba.NewSchemaCompatibility().Resolve(c.schema, w); err != nil {
			return nil, fmt.Errorf("acemq: %w: schema id %d (%s) to %s: %w", ErrIncompatible, id, name(w), name(c.schema), err)
		}
	}
	c.mu.Lock()
	c.writers[id] = s
	c.mu.Unlock()
	return s, nil
}
