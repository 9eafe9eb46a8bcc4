package acemq

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/acemq-go/acemq/contract"
)

// Codec turns message values into bodies and back, and names the content
// type it writes, so that a consumer in any language can pick the same codec.
//
// Unmarshal errors describe the body, so that a caller can set a message
// aside with "could not be decoded: " followed by the error.
type Codec interface {
	ContentType() string
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// The codecs every AceMQ library understands.
var (
	// JSON encodes with encoding/json as application/json.
	JSON Codec = jsonCodec{}
	// Bytes carries a []byte body unchanged as application/octet-stream;
	// it unmarshals into a *[]byte, as a copy of the body.
	Bytes Codec = bytesCodec{}
	// Text carries a string (or []byte) of UTF-8 as text/plain; it
	// unmarshals into a *string and refuses a body that is not UTF-8.
	Text Codec = textCodec{}
)

// codecFor picks the codec for a content type, ignoring case and parameters:
// application/json, text/json and any */*+json read as JSON, text/plain as
// Text, application/octet-stream as Bytes. Any other type, and a missing or
// unparsable one, has no codec: the body cannot be read safely.
func codecFor(contentType string) (Codec, bool) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	// A bad parameter still yields the media type, and parameters are ignored.
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return nil, false
	}
	switch mediaType {
	case contract.ContentTypeJSON, contract.ContentTypeTextJSON:
		return JSON, true
	case "text/plain":
		return Text, true
	case contract.ContentTypeBytes:
		return Bytes, true
	}
	if _, subtype, ok := strings.Cut(mediaType, "/"); ok &&
		len(subtype) > len(contract.ContentTypeJSONSuffix) && strings.HasSuffix(subtype, contract.ContentTypeJSONSuffix) {
		return JSON, true
	}
	return nil, false
}

// jsonReadable is what jsonContentType accepts, for a refusal's reason.
const jsonReadable = "it reads application/json, text/json, */*+json, text/plain in UTF-8, application/octet-stream or none"

// jsonContentType says whether a JSON consumer decodes a body sent with this
// content type, and whether the type declares JSON. It accepts the JSON
// types codecFor knows, none (every AceMQ library's JSON reads a body
// without one), and the two that JSON is most often sent as by mistake:
// text/plain (with no charset, or UTF-8 or its subset US-ASCII) and
// application/octet-stream. The body must still parse.
func jsonContentType(contentType string) (declared, accepted bool) {
	if isBlank(contentType) {
		return false, true
	}
	switch c, ok := codecFor(contentType); {
	case !ok:
		return false, false
	case c == JSON:
		return true, true
	case c == Bytes:
		return false, true
	}
	// Text's text/plain. A bad parameter yields no params, as codecFor
	// ignores it.
	_, params, _ := mime.ParseMediaType(contentType)
	charset, set := params["charset"]
	return false, !set || strings.EqualFold(charset, "utf-8") || strings.EqualFold(charset, "us-ascii")
}

type jsonCodec struct{}

func (jsonCodec) ContentType() string { return contract.ContentTypeJSON }

func (jsonCodec) Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("acemq: JSON codec: %w", err)
	}
	return b, nil
}

func (jsonCodec) Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("acemq: JSON codec: %w", err)
	}
	return nil
}

type bytesCodec struct{}

func (bytesCodec) ContentType() string { return contract.ContentTypeBytes }

func (bytesCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, wrongType("Bytes", "marshal", v, "[]byte")
	}
	return bytes.Clone(b), nil
}

func (bytesCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok || p == nil {
		return wrongType("Bytes", "unmarshal into", v, "*[]byte")
	}
	// The delivery's buffer is not the handler's to keep.
	*p = bytes.Clone(data)
	return nil
}

type textCodec struct{}

func (textCodec) ContentType() string { return contract.ContentTypeText }

func (textCodec) Marshal(v any) ([]byte, error) {
	var b []byte
	switch v := v.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = bytes.Clone(v)
	default:
		return nil, wrongType("Text", "marshal", v, "string or []byte")
	}
	if !utf8.Valid(b) {
		return nil, errors.New("acemq: Text codec: text is not valid UTF-8")
	}
	return b, nil
}

func (textCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*string)
	if !ok || p == nil {
		return wrongType("Text", "unmarshal into", v, "*string")
	}
	if !utf8.Valid(data) {
		return errors.New("acemq: Text codec: body is not valid UTF-8")
	}
	*p = string(data)
	return nil
}

// wrongType names the codec and the Go types; %T prints []byte as []uint8.
func wrongType(codec, op string, v any, want string) error {
	got := strings.ReplaceAll(fmt.Sprintf("%T", v), "uint8", "byte")
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		got = "a nil " + got
	}
	return fmt.Errorf("acemq: %s codec cannot %s %s, want %s", codec, op, got, want)
}
