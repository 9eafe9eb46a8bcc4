package avro

import (
	"fmt"
	"strings"

	hamba "github.com/hamba/avro/v2"

	"github.com/acemq-go/acemq/contract"
)

// FixedCodec is the Avro codec of one schema: bodies are bare Avro of it.
type FixedCodec struct {
	schema hamba.Schema
}

// Fixed returns the codec of schema, an Avro schema in JSON.
func Fixed(schema string) (*FixedCodec, error) {
	s, err := parse(schema)
	if err != nil {
		return nil, fmt.Errorf("acemq: avro codec: the schema: %w", err)
	}
	return &FixedCodec{schema: s}, nil
}

// ContentType is avro/binary.
func (c *FixedCodec) ContentType() string { return contract.ContentTypeAvro }

// Reads takes any avro/*, application/avro and any */*+avro, ignoring case
// and parameters; never application/vnd.acemq.avro (the registered
// codec's), never a message without a content type.
func (c *FixedCodec) Reads(contentType string) bool {
	mt, ok := mediaType(contentType)
	if !ok {
		return false
	}
	return (strings.HasPrefix(mt, contract.ContentTypeAvroPrefix) && len(mt) > len(contract.ContentTypeAvroPrefix)) || sharedType(mt)
}

// Marshal writes v as Avro of the schema.
func (c *FixedCodec) Marshal(v any) ([]byte, error) { return encode(c.schema, v) }

// Unmarshal reads data as one value of the schema into v, a pointer. It
// does not look for a framing: see the package documentation.
func (c *FixedCodec) Unmarshal(_ string, data []byte, v any) error {
	return decode(c.schema, data, v)
}
