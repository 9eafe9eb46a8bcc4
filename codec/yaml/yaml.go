// Package yaml is the AceMQ codec for YAML bodies (section 8 of the family's
// contract), with go.yaml.in/yaml/v3. It is a package of its own so that a
// service links and downloads the YAML library only when it imports this
// package; the root package acemq never does.
//
// It writes application/yaml and reads application/yaml,
// application/x-yaml, text/yaml, text/x-yaml and any */*+yaml, ignoring
// parameters and case; like every AceMQ library's YAML codec, it does not
// claim a message without a content type.
//
//	c, err := acemq.Consume(ctx, conn, "orders", handle, acemq.WithCodec(yaml.Codec))
//
// It writes what the Java reference writes, byte for byte: a two-space
// indent with a list's dashes at its key's column (Go's yaml.Marshal indents
// them four spaces; both read the same).
package yaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	goyaml "go.yaml.in/yaml/v3"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/mediatype"
)

// Codec encodes and decodes YAML as application/yaml.
var Codec acemq.Codec = codec{}

var (
	// ErrNoDocument is a body that holds no YAML document: empty, or only
	// comments.
	ErrNoDocument = errors.New("the body holds no YAML document")
	// ErrManyDocuments is a body of more than one document ("---"): a
	// message is one value.
	ErrManyDocuments = errors.New("the body holds more than one YAML document")
)

// reads are the content types read besides any */*+yaml.
var reads = []string{contract.ContentTypeYAML, contract.ContentTypeXYAML, contract.ContentTypeTextYAML, contract.ContentTypeTextXYAML}

type codec struct{}

func (codec) ContentType() string { return contract.ContentTypeYAML }

func (codec) Reads(contentType string) bool {
	return mediatype.Matches(contentType, reads, contract.ContentTypeYAMLSuffix)
}

// Readable says what Reads accepts, for a consumer's refusal.
func (codec) Readable() string {
	return mediatype.Readable(reads, contract.ContentTypeYAMLSuffix)
}

// Marshal returns an error for what go.yaml.in panics on (a func, a
// channel), rather than crash the publisher.
func (codec) Marshal(v any) (_ []byte, err error) {
	defer recoverAs(&err)
	var b bytes.Buffer
	enc := goyaml.NewEncoder(&b)
	// Java's (Jackson's) layout.
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	err = enc.Encode(v)
	if err == nil {
		err = enc.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("acemq: YAML codec: %w", err)
	}
	return b.Bytes(), nil
}

// Unmarshal decodes the one document data holds; unknown fields are
// ignored, as the JSON codec ignores them. A panic of go.yaml.in is an
// error too: a body must not crash the consumer.
func (codec) Unmarshal(_ string, data []byte, v any) (err error) {
	defer recoverAs(&err)
	dec := goyaml.NewDecoder(bytes.NewReader(data))
	err = dec.Decode(v)
	if errors.Is(err, io.EOF) {
		err = ErrNoDocument
	} else if err == nil {
		// Decoding the next document into a node says whether there is
		// one without touching v.
		var next goyaml.Node
		if err = dec.Decode(&next); errors.Is(err, io.EOF) {
			return nil
		} else if err == nil {
			err = ErrManyDocuments
		}
	}
	return fmt.Errorf("acemq: YAML codec: %w", err)
}

// recoverAs turns a panic into *err.
func recoverAs(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("acemq: YAML codec: %v", r)
	}
}
