// Package preview reads a message body for a person, as `acemq dlq show`
// prints it: the body of every format the AceMQ family writes, through the
// layers around it (an encrypted body decrypted with a keyring, a
// claim-check body unwrapped or fetched from its store, a registered Avro
// body's schema looked up by its id), down to text: JSON, YAML, TOML, XML
// and text as they are, protobuf without a schema as a dump of its wire
// format, Avro decoded to JSON.
//
// It never prints a key: what it says of an encrypted body is its key id,
// and the keyring's errors name the id alone. It is an internal package of
// the command (it links every format library, which a service importing
// the library's packages does not).
package preview

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	hamba "github.com/hamba/avro/v2"

	"github.com/acemq-go/acemq/claimcheck"
	"github.com/acemq-go/acemq/codec/avro"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/encryption"
	"github.com/acemq-go/acemq/internal/mediatype"
	"github.com/acemq-go/acemq/schemaregistry"
)

// DefaultLimit is how many bytes of text a preview keeps when Options.Limit
// is 0.
const DefaultLimit = 200

// maxLayers bounds the layers read around a body (claim check in
// encryption in claim check...), so that a body of nested framings ends.
const maxLayers = 8

// Need says what a body needs to be read further, when that is not given.
type Need int

// The things a body may need.
const (
	NeedNothing    Need = iota
	NeedAvroSchema      // an avro/* body: the schema it was written with
	NeedRegistry        // a registered Avro body: the registry that has its id
	NeedKeys            // an encrypted body: a keyring
	NeedClaimStore      // an offloaded claim check: the store that holds it
)

// Hint says which flag of acemq (dlq show and console take the same ones)
// gives what a body needs; "" for NeedNothing.
func Hint(n Need) string {
	switch n {
	case NeedAvroSchema:
		return "give --avro-schema FILE to decode"
	case NeedRegistry:
		return "give --schema-registry PATH|URL to decode"
	case NeedKeys:
		return "give --keys FILE or $ACEMQ_KEYS to decrypt"
	case NeedClaimStore:
		return "give --claim-store DIR to fetch it"
	}
	return ""
}

// Options are what a Reader may use to read bodies; each may be left out.
type Options struct {
	// Keyring decrypts application/vnd.acemq.encrypted bodies.
	Keyring *encryption.Keyring
	// AvroSchema is the schema, in JSON, of bodies of fixed-schema Avro
	// (avro/*).
	AvroSchema string
	// Registry has the schemas of registered Avro bodies.
	Registry schemaregistry.Registry
	// ClaimStore holds the payloads of offloaded claim checks.
	ClaimStore claimcheck.Store
	// Limit is how many bytes of text a preview keeps; 0 is DefaultLimit.
	Limit int
}

// Preview is a body as read for a person.
type Preview struct {
	// Text is the body as read: its own text (Rendered false) or a
	// rendering of it, one line (Rendered true: a protobuf dump, Avro as
	// JSON); its first Limit bytes. It is "" when the body is empty or was
	// not read to the end.
	Text string
	// Truncated says that Text is the start of what was read.
	Truncated bool
	// Rendered says that Text is a rendering, not the body's own text.
	Rendered bool
	// Steps say how the body was read, outermost first: the layers
	// ("encrypted, key id \"2026-01\"", "claim check, inline") and the
	// format ("json", "protobuf wire format, no schema", "bytes"...).
	Steps []string
	// Need is what the body needs to be read further, when not given.
	Need Need
	// Err is why the body could not be read further: a body that does not
	// decrypt, a payload gone from its store, Avro that does not decode.
	Err error
}

// Decoded is Steps, joined with " > ".
func (p Preview) Decoded() string { return strings.Join(p.Steps, " > ") }

// Reader reads bodies with its Options. It is safe for concurrent use.
type Reader struct {
	o     Options
	fixed *avroSchema

	mu         sync.Mutex
	registered map[uint32]*avroSchema // by id: ids never change
}

// avroSchema is a schema both as the codec decodes it (strictly: no bytes
// left over, none missing) and as hamba walks it (fields in their order).
type avroSchema struct {
	codec  *avro.FixedCodec
	schema hamba.Schema
}

func parseAvro(text string) (*avroSchema, error) {
	c, err := avro.Fixed(text)
	if err != nil {
		return nil, err
	}
	s, err := hamba.ParseWithCache(text, "", &hamba.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("acemq: avro schema: %w", err)
	}
	return &avroSchema{c, s}, nil
}

// New returns a Reader with o; an Avro schema that does not parse is an
// error.
func New(o Options) (*Reader, error) {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	r := &Reader{o: o, registered: map[uint32]*avroSchema{}}
	if o.AvroSchema != "" {
		s, err := parseAvro(o.AvroSchema)
		if err != nil {
			return nil, err
		}
		r.fixed = s
	}
	return r, nil
}

// Body reads body, sent as contentType.
func (r *Reader) Body(ctx context.Context, contentType string, body []byte) Preview {
	var p Preview
	r.read(ctx, &p, contentType, body, 0)
	return p
}

func (r *Reader) read(ctx context.Context, p *Preview, contentType string, body []byte, layer int) {
	if layer >= maxLayers {
		p.Steps = append(p.Steps, "bytes")
		p.Err = fmt.Errorf("%w: more than %d layers", ErrTooDeep, maxLayers)
		return
	}
	// A claim check keeps its inner codec's content type: the framing
	// says what it is.
	if marker, rest, ok := claimCheck(body); ok {
		r.claimCheck(ctx, p, contentType, marker, rest, layer)
		return
	}
	switch kind := kindOf(contentType); kind {
	case kindEncrypted:
		r.encrypted(ctx, p, body, layer)
	case kindProtobuf:
		p.Steps = append(p.Steps, "protobuf wire format, no schema")
		r.protobuf(p, body)
	case kindAvroFixed:
		r.avroFixed(p, body)
	case kindAvroRegistered:
		r.avroRegistered(ctx, p, body)
	case kindAvroShared:
		// Both Avro codecs read these types: the framing and the schemas
		// given say which wrote it.
		if r.fixed != nil && r.fixed.codec.Unmarshal(contentType, body, new(any)) == nil {
			r.avroFixed(p, body)
		} else if framedAvro(body) {
			r.avroRegistered(ctx, p, body)
		} else {
			r.avroFixed(p, body)
		}
	case kindUnknown:
		r.sniff(ctx, p, body)
	default:
		r.text(p, string(kind), body)
	}
}

// ErrTooDeep is matched by Preview.Err for a body of more layers than a
// preview reads.
var ErrTooDeep = errors.New("preview: too many layers")

// ErrNotProtobuf is matched by Preview.Err for a body that is not protobuf
// wire format.
var ErrNotProtobuf = errors.New("preview: not protobuf wire format")

// text previews a body of a text format, or says it is not text.
func (r *Reader) text(p *Preview, format string, body []byte) {
	s, truncated, ok := cut(body, r.o.Limit)
	if !ok {
		p.Steps = append(p.Steps, "bytes")
		return
	}
	p.Steps = append(p.Steps, format)
	p.Text, p.Truncated = s, truncated
}

// render keeps a rendering, its first Limit bytes.
func (r *Reader) render(p *Preview, s string) {
	t, truncated, _ := cut([]byte(s), r.o.Limit)
	p.Text, p.Truncated, p.Rendered = t, truncated, true
}

// cut is the start of body, at most limit bytes and never inside a rune;
// ok is false when body is not UTF-8.
func cut(body []byte, limit int) (s string, truncated, ok bool) {
	c := body[:min(len(body), limit)]
	for i := 0; i < utf8.UTFMax-1 && len(c) < len(body) && len(c) > 0 && !utf8.Valid(c); i++ {
		c = c[:len(c)-1] // a rune split at the cut
	}
	if !utf8.Valid(c) {
		return "", false, false
	}
	return string(c), len(c) < len(body), true
}

func (r *Reader) claimCheck(ctx context.Context, p *Preview, contentType string, marker byte, rest []byte, layer int) {
	if marker == contract.ClaimCheckInline {
		p.Steps = append(p.Steps, "claim check, inline")
		r.read(ctx, p, contentType, rest, layer+1)
		return
	}
	if len(rest) == 0 || !utf8.Valid(rest) {
		p.Steps = append(p.Steps, "claim check, offloaded")
		p.Err = fmt.Errorf("%w: an offloaded body whose key (%d bytes) is empty or not UTF-8", claimcheck.ErrMalformed, len(rest))
		return
	}
	key := string(rest)
	p.Steps = append(p.Steps, fmt.Sprintf("claim check, offloaded under key %q", key))
	if r.o.ClaimStore == nil {
		p.Need = NeedClaimStore
		return
	}
	payload, err := r.o.ClaimStore.Get(ctx, key)
	if err != nil {
		if !strings.Contains(err.Error(), key) {
			err = fmt.Errorf("claimcheck: key %q: %w", key, err)
		}
		p.Err = err
		return
	}
	r.read(ctx, p, contentType, payload, layer+1)
}

func (r *Reader) encrypted(ctx context.Context, p *Preview, body []byte, layer int) {
	id, ok := keyID(body)
	if !ok {
		// Not the framing: the keyring's error says how (no key is used).
		p.Steps = append(p.Steps, "encrypted")
		_, p.Err = (&encryption.Keyring{}).Decrypt(body)
		if p.Err == nil {
			p.Err = encryption.ErrNotEncrypted
		}
		return
	}
	p.Steps = append(p.Steps, fmt.Sprintf("encrypted, key id %q", id))
	if r.o.Keyring == nil {
		p.Need = NeedKeys
		return
	}
	plaintext, err := r.o.Keyring.Decrypt(body)
	if err != nil {
		p.Err = err
		return
	}
	// The inner codec's content type is not sent: the plaintext says.
	r.read(ctx, p, "", plaintext, layer+1)
}

// keyID is the key id of a body in the encrypted framing, false for a body
// that is not one (too short for its header, nonce and tag included).
func keyID(body []byte) (string, bool) {
	if len(body) < 3 || body[0] != contract.EncryptedMagic || body[1] != contract.EncryptedVersion {
		return "", false
	}
	n := int(body[2])
	if n == 0 || len(body) < 3+n+contract.EncryptedNonceSize+contract.EncryptedTagSize {
		return "", false
	}
	id := body[3 : 3+n]
	if !utf8.Valid(id) || bytes.IndexByte(id, 0) >= 0 {
		return "", false
	}
	return string(id), true
}

// claimCheck splits a claim-check body into its marker and the rest.
func claimCheck(body []byte) (marker byte, rest []byte, ok bool) {
	if len(body) < 3 || body[0] != contract.ClaimCheckMagic || body[1] != contract.ClaimCheckVersion {
		return 0, nil, false
	}
	if body[2] != contract.ClaimCheckInline && body[2] != contract.ClaimCheckOffloaded {
		return 0, nil, false
	}
	return body[2], body[3:], true
}

// framedAvro says whether body starts as the registered Avro framing.
func framedAvro(body []byte) bool {
	return len(body) >= contract.AvroFramingHeaderSize && body[0] == contract.AvroFramingMagic
}

func (r *Reader) avroFixed(p *Preview, body []byte) {
	if r.fixed == nil {
		p.Steps = append(p.Steps, "avro, no schema")
		p.Need = NeedAvroSchema
		return
	}
	p.Steps = append(p.Steps, "avro, schema "+schemaName(r.fixed.schema))
	r.avro(p, r.fixed, body)
}

func (r *Reader) avroRegistered(ctx context.Context, p *Preview, body []byte) {
	if !framedAvro(body) {
		p.Steps = append(p.Steps, "registered avro")
		p.Err = avro.ErrNotFramed
		if len(body) > 0 {
			p.Err = fmt.Errorf("acemq: %w: the body starts 0x%02x", avro.ErrNotFramed, body[0])
		}
		return
	}
	id := binary.BigEndian.Uint32(body[1:contract.AvroFramingHeaderSize])
	p.Steps = append(p.Steps, fmt.Sprintf("registered avro, schema id %d", id))
	if r.o.Registry == nil {
		p.Need = NeedRegistry
		return
	}
	s, err := r.schema(ctx, id)
	if err != nil {
		p.Err = err
		return
	}
	p.Steps = append(p.Steps, "avro, schema "+schemaName(s.schema))
	r.avro(p, s, body[contract.AvroFramingHeaderSize:])
}

// schema is the writer's schema of id, from the registry.
func (r *Reader) schema(ctx context.Context, id uint32) (*avroSchema, error) {
	r.mu.Lock()
	s, ok := r.registered[id]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	def, err := r.o.Registry.Schema(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("looking up schema id %d: %w", id, err)
	}
	s, err = parseAvro(def)
	if err != nil {
		return nil, fmt.Errorf("the registry's schema id %d: %w", id, err)
	}
	r.mu.Lock()
	r.registered[id] = s
	r.mu.Unlock()
	return s, nil
}

func (r *Reader) avro(p *Preview, s *avroSchema, body []byte) {
	var v any
	if err := s.codec.Unmarshal(contract.ContentTypeAvro, body, &v); err != nil {
		p.Err = err
		return
	}
	r.render(p, renderAvro(s.schema, v))
}

func (r *Reader) protobuf(p *Preview, body []byte) {
	s, err := dumpWire(body, 0)
	if err != nil {
		p.Err = err
		return
	}
	r.render(p, s)
}

// sniff reads a body whose content type says nothing (none, an unknown
// one, or the plaintext of an encrypted body, whose inner codec's type is
// not sent): text when it is UTF-8, else what the schemas given decode,
// else protobuf wire format when it parses as that, else bytes.
func (r *Reader) sniff(ctx context.Context, p *Preview, body []byte) {
	if utf8.Valid(body) {
		r.text(p, "text", body)
		return
	}
	if r.fixed != nil && r.fixed.codec.Unmarshal(contract.ContentTypeAvro, body, new(any)) == nil {
		r.avroFixed(p, body)
		return
	}
	if r.o.Registry != nil && framedAvro(body) {
		id := binary.BigEndian.Uint32(body[1:contract.AvroFramingHeaderSize])
		if s, err := r.schema(ctx, id); err == nil && s.codec.Unmarshal(contract.ContentTypeAvro, body[contract.AvroFramingHeaderSize:], new(any)) == nil {
			r.avroRegistered(ctx, p, body)
			return
		}
	}
	if s, err := dumpWire(body, 0); err == nil {
		p.Steps = append(p.Steps, "protobuf wire format, guessed")
		r.render(p, s)
		return
	}
	p.Steps = append(p.Steps, "bytes")
}

// kind is the format a content type names: a text format's name, or one
// of the constants.
type kind string

const (
	kindUnknown        kind = ""
	kindEncrypted      kind = "encrypted"
	kindProtobuf       kind = "protobuf"
	kindAvroFixed      kind = "avro/*"
	kindAvroRegistered kind = "registered avro"
	kindAvroShared     kind = "avro"
)

// textFormats are the text formats by name, the types and suffix each
// codec reads (section 8 of the contract), in the order tried.
var textFormats = []struct {
	name   kind
	types  []string
	suffix string
}{
	{"json", []string{contract.ContentTypeJSON, contract.ContentTypeTextJSON}, contract.ContentTypeJSONSuffix},
	{"yaml", []string{contract.ContentTypeYAML, contract.ContentTypeXYAML, contract.ContentTypeTextYAML, contract.ContentTypeTextXYAML}, contract.ContentTypeYAMLSuffix},
	{"toml", []string{contract.ContentTypeTOML, contract.ContentTypeTextTOML}, contract.ContentTypeTOMLSuffix},
	{"xml", []string{contract.ContentTypeXML, contract.ContentTypeTextXML}, contract.ContentTypeXMLSuffix},
}

var protobufTypes = []string{contract.ContentTypeProtobuf, contract.ContentTypeProtobufIETF, contract.ContentTypeProtobufGoogle}

func kindOf(contentType string) kind {
	n := len(contract.ContentTypeEncrypted)
	if len(contentType) >= n && strings.EqualFold(contentType[:n], contract.ContentTypeEncrypted) {
		return kindEncrypted // the encryption codec's own rule: a prefix
	}
	mt := mediatype.Of(contentType)
	switch {
	case mt == "":
		return kindUnknown
	case mt == contract.ContentTypeAvroRegistered:
		return kindAvroRegistered
	case mediatype.Matches(mt, []string{contract.ContentTypeAvroApplication}, contract.ContentTypeAvroSuffix):
		return kindAvroShared
	case strings.HasPrefix(mt, contract.ContentTypeAvroPrefix) && len(mt) > len(contract.ContentTypeAvroPrefix):
		return kindAvroFixed
	case mediatype.Matches(mt, protobufTypes, contract.ContentTypeProtobufSuffix):
		return kindProtobuf
	}
	for _, f := range textFormats {
		if mediatype.Matches(mt, f.types, f.suffix) {
			return f.name
		}
	}
	if strings.HasPrefix(mt, contract.ContentTypeTextPrefix) {
		return "text"
	}
	return kindUnknown
}
