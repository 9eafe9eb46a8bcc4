// Package toml is the AceMQ codec for TOML bodies (section 8 of the family's
// contract), with github.com/pelletier/go-toml/v2. It is a package of its
// own so that a service links and downloads the TOML library only when it
// imports this package; the root package acemq never does.
//
// It writes application/toml and reads application/toml, text/toml and any
// */*+toml, ignoring parameters and case; like every AceMQ library's TOML
// codec, it does not claim a message without a content type.
//
//	p, err := acemq.NewPublisher[Order](conn, "orders", acemq.WithCodec(toml.Codec))
//
// A TOML document is a table: Marshal takes a struct or a map with string
// keys (or a pointer to one). It writes what the Java reference writes,
// byte for byte: strings in single quotes where they can be (the Go peer,
// with BurntSushi/toml, writes double quotes; both read the same). An empty
// body is an empty table, as TOML has it.
package toml

import (
	"errors"
	"fmt"

	gotoml "github.com/pelletier/go-toml/v2"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/internal/mediatype"
)

// Codec encodes and decodes TOML as application/toml.
var Codec acemq.Codec = codec{}

// reads are the content types read besides any */*+toml.
var reads = []string{contract.ContentTypeTOML, contract.ContentTypeTextTOML}

type codec struct{}

func (codec) ContentType() string { return contract.ContentTypeTOML }

func (codec) Reads(contentType string) bool {
	return mediatype.Matches(contentType, reads, contract.ContentTypeTOMLSuffix)
}

// Readable says what Reads accepts, for a consumer's refusal.
func (codec) Readable() string {
	return mediatype.Readable(reads, contract.ContentTypeTOMLSuffix)
}

func (codec) Marshal(v any) ([]byte, error) {
	b, err := gotoml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("acemq: TOML codec: %w", err)
	}
	return b, nil
}

// Unmarshal decodes data into v; unknown fields are ignored, as the JSON
// codec ignores them. A syntax error is a *toml.DecodeError of go-toml,
// with its line and column.
func (codec) Unmarshal(_ string, data []byte, v any) error {
	err := gotoml.Unmarshal(data, v)
	var de *gotoml.DecodeError
	if errors.As(err, &de) {
		line, column := de.Position()
		return fmt.Errorf("acemq: TOML codec: line %d, column %d: %w", line, column, err)
	}
	if err != nil {
		return fmt.Errorf("acemq: TOML codec: %w", err)
	}
	return nil
}
