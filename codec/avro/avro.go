// Package avro is the AceMQ family's two Avro codecs (github.com/hamba/avro/v2),
// a package of its own so that only a service that imports it links and
// downloads an Avro library; the root package acemq does not depend on it.
//
//   - Fixed is the codec of one given schema: it writes avro/binary, the bare
//     Avro body, and reads any avro/*, application/avro and any */*+avro,
//     never application/vnd.acemq.avro.
//   - Registered writes application/vnd.acemq.avro in Confluent's framing
//     (the byte 0x00, the schema id as 4 bytes big-endian, the Avro body),
//     registering its schema in a schemaregistry.Registry on the first
//     write; reading, it looks the writer's schema up by the body's id and
//     resolves it to its own, as Avro does (fields added with a default,
//     removed, promoted). It reads that type, application/avro and any
//     */*+avro, never avro/binary.
//
// Neither reads a message without a content type. The fixed-schema codec
// never guesses the framing from the body (nor does the Go peer library's;
// Java's, Ruby's and Python's refuse a body of 5 or more bytes starting
// 0x00 sent without an Avro content type): given application/avro or
// */*+avro, which both codecs read, it decodes a framed body as Avro of its
// own schema, which most often fails (bytes are left over) but may not. A
// consumer of both puts the registered codec first:
//
//	acemq.WithCodec(acemq.Codecs(registered, fixed))
//
// A registry out of reach is retried under the policy, by the registered
// codec alone or in acemq.Codecs.
//
// Values are what hamba/avro encodes: a struct with `avro:"name"` field
// tags, or a map[string]any. A body must hold exactly one value of the
// schema: one that ends early or has bytes after the value is an error.
package avro

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"sync"

	hamba "github.com/hamba/avro/v2"

	"github.com/acemq-go/acemq/contract"
)

// Errors the codecs' errors match (errors.Is). An unknown schema id matches
// schemaregistry.ErrUnknownSchema.
var (
	// ErrNotFramed: a body the registered codec reads that does not start
	// with the framing's magic byte.
	ErrNotFramed = errors.New("avro codec: not the registered framing (0x00 and a schema id)")
	// ErrTruncated: a body that ends before its header or its value does.
	ErrTruncated = errors.New("avro codec: truncated body")
	// ErrTrailingBytes: a body with bytes after its value.
	ErrTrailingBytes = errors.New("avro codec: bytes after the value")
	// ErrRegistryUnreachable: the schema registry did not answer; the
	// decoding error is marked acemq.Temporary, so the message is retried.
	ErrRegistryUnreachable = errors.New("avro codec: schema registry unreachable")
	// ErrIncompatible: the writer's schema does not resolve to the reader's.
	ErrIncompatible = errors.New("avro codec: the writer's schema does not resolve to the reader's")
)

// mediaType is contentType's media type, lower case without parameters;
// false for one that does not parse.
func mediaType(contentType string) (string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return "", false
	}
	return mt, true
}

// sharedType is a type both codecs read: application/avro or */*+avro.
func sharedType(mt string) bool {
	if mt == contract.ContentTypeAvroApplication {
		return true
	}
	_, subtype, ok := strings.Cut(mt, "/")
	return ok && len(subtype) > len(contract.ContentTypeAvroSuffix) && strings.HasSuffix(subtype, contract.ContentTypeAvroSuffix)
}

// parse parses a schema in a cache of its own: hamba's default cache is
// shared by name, and a writer's schema and a reader's of the same record
// name differ.
func parse(schema string) (hamba.Schema, error) {
	return hamba.ParseWithCache(schema, "", &hamba.SchemaCache{})
}

func encode(schema hamba.Schema, v any) ([]byte, error) {
	b, err := hamba.Marshal(schema, v)
	if err != nil {
		return nil, fmt.Errorf("acemq: avro codec: %w", err)
	}
	return b, nil
}

// decode reads exactly one value of schema from data into v. hamba's
// Unmarshal takes a body that ends early for one whose missing fields are
// zero, and ignores bytes after the value: both are errors here.
// readers are hamba Readers for reuse, as hamba's own Unmarshal does: a
// Reader is over a kilobyte.
var readers = sync.Pool{New: func() any { return hamba.NewReader(nil, 0) }}

func decode(schema hamba.Schema, data []byte, v any) error {
	r := readers.Get().(*hamba.Reader).Reset(data)
	defer func() {
		r.Reset(nil).Error = nil
		readers.Put(r)
	}()
	r.ReadVal(schema, v)
	if errors.Is(r.Error, io.EOF) || errors.Is(r.Error, io.ErrUnexpectedEOF) {
		return fmt.Errorf("acemq: %w: %d bytes end before the value of %s does (%v)", ErrTruncated, len(data), name(schema), r.Error)
	}
	if r.Error != nil {
		return fmt.Errorf("acemq: avro codec: %s: %w", name(schema), r.Error)
	}
	if r.Peek(); r.Error == nil {
		return fmt.Errorf("acemq: %w of %s in %d bytes", ErrTrailingBytes, name(schema), len(data))
	}
	return nil
}

// name is a schema's full name, or its type for an unnamed one.
func name(s hamba.Schema) string {
	if n, ok := s.(hamba.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}
