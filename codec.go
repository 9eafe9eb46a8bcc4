package acemq

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acemq-go/acemq/contract"
)

// Codec turns message values into bodies and back. It names the content
// type it writes, so that a consumer in any language can pick the same
// codec, and says which content types it reads, as the AceMQ libraries pick
// a decoder by the message's (docs/contract.md, "Content types").
//
// Unmarshal errors describe the body, so that a caller can set a message
// aside with "could not be decoded: " followed by the error.
type Codec interface {
	// ContentType is what Marshal's bodies are sent as.
	ContentType() string
	// Reads reports whether Unmarshal decodes a body sent as contentType,
	// "" being a message without one. A consumer parks a message whose
	// content type its codec does not read.
	Reads(contentType string) bool
	Marshal(v any) ([]byte, error)
	// Unmarshal decodes data, a body sent as contentType, into v.
	Unmarshal(contentType string, data []byte, v any) error
}

// readable is a codec that says what it reads, for a consumer's refusal of
// a content type: the codecs of codec/yaml, codec/toml and codec/xml say
// "it reads application/yaml, application/x-yaml, ...".
type readable interface {
	Readable() string
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

// DefaultCodec is the codec of a body given none, by its type, as a
// Publisher and a Consumer without WithCodec pick it: Bytes for []byte,
// Text for string, JSON for anything else.
func DefaultCodec(body any) Codec {
	switch body.(type) {
	case []byte:
		return Bytes
	case string:
		return Text
	}
	return JSON
}

// codecFor picks the codec for a content type, ignoring case and parameters:
// application/json, text/json and any */*+json read as JSON, text/plain as
// Text, application/octet-stream as Bytes. Any other type, and a missing or
// unparsable one, has no codec: the body cannot be read safely.
func codecFor(contentType string) (Codec, bool) {
	if contentType == contract.ContentTypeJSON { // every AceMQ publish's: no parse, no allocation
		return JSON, true
	}
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

// Reads is what jsonContentType accepts.
func (jsonCodec) Reads(contentType string) bool {
	_, accepted := jsonContentType(contentType)
	return accepted
}

// Unmarshal says which content type a body that does not parse came as,
// when that was not a JSON one.
func (jsonCodec) Unmarshal(contentType string, data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("acemq: JSON codec: %w", err)
	if declared, _ := jsonContentType(contentType); !declared && !isBlank(contentType) {
		return fmt.Errorf("the body sent as %q is not JSON: %w", contentType, err)
	}
	return err
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

// Reads is true: bytes are bytes, whatever they were sent as.
func (bytesCodec) Reads(string) bool { return true }

func (bytesCodec) Unmarshal(_ string, data []byte, v any) error {
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

// Reads takes any text/* type, and no message without a content type.
func (textCodec) Reads(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && strings.HasPrefix(mediaType, contract.ContentTypeTextPrefix)
}

func (textCodec) Unmarshal(_ string, data []byte, v any) error {
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

// Codecs is a codec of several formats, as a consumer that accepts more than
// one uses it: it reads what any of them reads, and decodes a body with each
// codec that reads its content type, in order, until one succeeds; the error
// of a body none decodes names every codec tried. It writes as first.
func Codecs(first Codec, more ...Codec) Codec {
	return composite(append([]Codec{first}, more...))
}

type composite []Codec

func (c composite) ContentType() string           { return c[0].ContentType() }
func (c composite) Marshal(v any) ([]byte, error) { return c[0].Marshal(v) }

func (c composite) Reads(contentType string) bool {
	return slices.ContainsFunc(c, func(m Codec) bool { return m.Reads(contentType) })
}

func (c composite) Unmarshal(contentType string, data []byte, v any) error {
	var errs []string
	temporary := false
	for _, m := range c {
		if !m.Reads(contentType) {
			continue
		}
		err := m.Unmarshal(contentType, data, v)
		if err == nil {
			return nil
		}
		errs = append(errs, m.ContentType()+": "+err.Error())
		temporary = temporary || IsTemporary(err)
	}
	if len(errs) == 0 {
		return fmt.Errorf("no codec reads %q (%s)", contentType, c.names())
	}
	err := fmt.Errorf("no codec decoded it: %s", strings.Join(errs, "; "))
	if temporary {
		// One member may decode it later (its store or registry is out of
		// reach): the message is retried, not parked.
		return Temporary(err)
	}
	return err
}

// names lists what the codecs write, to say which were there.
func (c composite) names() string {
	names := make([]string, len(c))
	for i, m := range c {
		names[i] = m.ContentType()
	}
	return "the codecs are " + strings.Join(names, ", ")
}
