package acemq

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"reflect"
	"strings"
	"testing"

	"github.com/acemq-go/acemq/contract"
	"github.com/acemq-go/acemq/transport"
)

func TestCodecContentTypes(t *testing.T) {
	for _, tt := range []struct {
		codec Codec
		want  string
	}{
		{JSON, "application/json"},
		{Bytes, "application/octet-stream"},
		{Text, "text/plain; charset=utf-8"},
	} {
		if got := tt.codec.ContentType(); got != tt.want {
			t.Errorf("ContentType = %q, want %q", got, tt.want)
		}
		// A codec reads what it writes.
		if got, ok := codecFor(tt.want); !ok || got != tt.codec {
			t.Errorf("codecFor(%q) = %v, %v", tt.want, got, ok)
		}
	}
}

func TestCodecFor(t *testing.T) {
	tests := []struct {
		contentType string
		want        Codec // nil: no codec
	}{
		{"application/json", JSON},
		{"application/json; charset=utf-8", JSON},
		{"Application/JSON", JSON},
		{"  application/json  ", JSON},
		{"text/json", JSON},
		{"TEXT/JSON", JSON},
		{"application/vnd.acme+json; charset=utf-8", JSON},
		{"application/problem+json", JSON},
		{"application/cloudevents+json", JSON},
		{"application/json; charset", JSON}, // a bad parameter is ignored
		{"text/plain", Text},
		{"text/plain; charset=utf-8", Text},
		{"TEXT/PLAIN; CHARSET=UTF-8", Text},
		{"application/octet-stream", Bytes},
		{"", nil},
		{"   ", nil},
		{"json", nil},
		{"application", nil},
		{"application/", nil},
		{"application/+json", nil},
		{"application/json+xml", nil},
		{"application/jsonx", nil},
		{"application/xml", nil},
		{"application/x-protobuf", nil},
		{"text/html", nil},
		{"*/*", nil},
		{"application/json/extra", nil},
		{"garbage; ;;", nil},
		{"\xff\xfe", nil},
	}
	for _, tt := range tests {
		got, ok := codecFor(tt.contentType)
		if got != tt.want || ok != (tt.want != nil) {
			t.Errorf("codecFor(%q) = %v, %v, want %v", tt.contentType, got, ok, tt.want)
		}
	}
}

func TestJSONCodec(t *testing.T) {
	type order struct {
		ID    string `json:"id"`
		Total int    `json:"total"`
	}
	b, err := JSON.Marshal(order{"o-1", 42})
	if err != nil || string(b) != `{"id":"o-1","total":42}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var o order
	if err := JSON.Unmarshal(contract.ContentTypeJSON, b, &o); err != nil || o != (order{"o-1", 42}) {
		t.Fatalf("Unmarshal = %+v, %v", o, err)
	}

	if _, err := JSON.Marshal(make(chan int)); err == nil || !strings.Contains(err.Error(), "JSON codec") {
		t.Errorf("Marshal(chan) = %v, want an error naming the JSON codec", err)
	}
	err = JSON.Unmarshal(contract.ContentTypeJSON, []byte("{not json"), &o)
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) || !strings.Contains(err.Error(), "JSON codec") {
		t.Errorf("Unmarshal(garbage) = %v, want a wrapped *json.SyntaxError", err)
	}
	if err := JSON.Unmarshal(contract.ContentTypeJSON, []byte(`{}`), o); err == nil {
		t.Error("Unmarshal into a non-pointer succeeded")
	}
}

func TestBytesCodec(t *testing.T) {
	in := []byte{0, 1, 0xff}
	b, err := Bytes.Marshal(in)
	if err != nil || !reflect.DeepEqual(b, in) {
		t.Fatalf("Marshal = %v, %v", b, err)
	}
	var out []byte
	if err := Bytes.Unmarshal(contract.ContentTypeBytes, in, &out); err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("Unmarshal = %v, %v", out, err)
	}
	in[0] = 9
	if out[0] != 0 || b[0] != 0 {
		t.Error("Bytes shares the caller's buffer")
	}

	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"marshal string", second(Bytes.Marshal("text")), "Bytes codec cannot marshal string, want []byte"},
		{"marshal nil", second(Bytes.Marshal(nil)), "Bytes codec cannot marshal <nil>, want []byte"},
		{"unmarshal into []byte", Bytes.Unmarshal(contract.ContentTypeBytes, in, out), "Bytes codec cannot unmarshal into []byte, want *[]byte"},
		{"unmarshal into *string", Bytes.Unmarshal(contract.ContentTypeBytes, in, new(string)), "Bytes codec cannot unmarshal into *string, want *[]byte"},
		{"unmarshal into nil", Bytes.Unmarshal(contract.ContentTypeBytes, in, (*[]byte)(nil)), "Bytes codec cannot unmarshal into a nil *[]byte, want *[]byte"},
	} {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, tt.err, tt.want)
		}
	}
}

func TestTextCodec(t *testing.T) {
	for _, in := range []any{"héllo ☃", []byte("héllo ☃")} {
		b, err := Text.Marshal(in)
		if err != nil || string(b) != "héllo ☃" {
			t.Errorf("Marshal(%#v) = %q, %v", in, b, err)
		}
	}
	var s string
	if err := Text.Unmarshal(contract.ContentTypeText, []byte("héllo ☃"), &s); err != nil || s != "héllo ☃" {
		t.Fatalf("Unmarshal = %q, %v", s, err)
	}
	if err := Text.Unmarshal(contract.ContentTypeText, nil, &s); err != nil || s != "" {
		t.Errorf("Unmarshal(empty) = %q, %v", s, err)
	}

	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"marshal int", second(Text.Marshal(42)), "Text codec cannot marshal int, want string or []byte"},
		{"marshal invalid UTF-8", second(Text.Marshal("a\xff")), "not valid UTF-8"},
		{"unmarshal invalid UTF-8", Text.Unmarshal(contract.ContentTypeText, []byte{'a', 0xc3}, &s), "Text codec: body is not valid UTF-8"},
		{"unmarshal into *[]byte", Text.Unmarshal(contract.ContentTypeText, []byte("a"), new([]byte)), "Text codec cannot unmarshal into *[]byte, want *string"},
		{"unmarshal into nil", Text.Unmarshal(contract.ContentTypeText, []byte("a"), (*string)(nil)), "Text codec cannot unmarshal into a nil *string"},
	} {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, tt.err, tt.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func FuzzCodecFor(f *testing.F) {
	for _, s := range []string{"", "application/json", "application/vnd.acme+json; charset=utf-8", "TEXT/JSON", "text/plain; charset=utf-8", "a/b+json;;", "garbage"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, contentType string) {
		c, ok := codecFor(contentType)
		if ok != (c != nil) {
			t.Fatalf("codecFor(%q) = %v, %v", contentType, c, ok)
		}
		if !ok {
			return
		}
		// Whatever picks a codec names a media type.
		mediaType, _, err := mime.ParseMediaType(contentType)
		if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) || !strings.Contains(mediaType, "/") {
			t.Errorf("codecFor(%q) picked %v for media type %q (%v)", contentType, c.ContentType(), mediaType, err)
		}
	})
}

// A JSON consumer decodes the JSON types, no content type, text/plain in
// UTF-8 and application/octet-stream (the types JSON is sent as by mistake);
// anything else is parked with a reason naming the type and what is read.
func TestJSONContentType(t *testing.T) {
	tests := []struct {
		contentType        string
		declared, accepted bool
	}{
		{"application/json", true, true},
		{"application/json; charset=utf-8", true, true},
		{"Application/JSON", true, true},
		{"text/json", true, true},
		{"application/vnd.acme+json; v=2", true, true},
		{"application/problem+json", true, true},
		{"", false, true},
		{"  ", false, true},
		{"text/plain", false, true},
		{"text/plain; charset=utf-8", false, true},
		{"TEXT/PLAIN; CHARSET=UTF-8", false, true},
		{"text/plain; charset=us-ascii", false, true},
		{"text/plain; format=flowed", false, true},
		{"text/plain; charset", false, true}, // a bad parameter is ignored, as in codecFor
		{"application/octet-stream", false, true},
		{"application/octet-stream; x=y", false, true},
		{"text/plain; charset=iso-8859-1", false, false},
		{"text/plain; charset=utf-16", false, false},
		{"text/html", false, false},
		{"text/csv", false, false},
		{"application/xml", false, false},
		{"application/x-protobuf", false, false},
		{"application/vnd.acemq.encrypted", false, false},
		{"avro/binary", false, false},
		{"garbage", false, false},
		{"\xff", false, false},
	}
	for _, tt := range tests {
		if declared, accepted := jsonContentType(tt.contentType); declared != tt.declared || accepted != tt.accepted {
			t.Errorf("jsonContentType(%q) = %v, %v, want %v, %v", tt.contentType, declared, accepted, tt.declared, tt.accepted)
		}
	}
}

func TestDecodeBody(t *testing.T) {
	type order struct {
		ID string `json:"id"`
	}
	tests := []struct {
		name        string
		contentType string
		body        string
		want        string // the error's text, "" when it decodes
	}{
		{"JSON", "application/json", `{"id":"o-1"}`, ""},
		{"no content type", "", `{"id":"o-1"}`, ""},
		{"text/plain", "text/plain", `{"id":"o-1"}`, ""},
		{"text/plain in UTF-8", "text/plain; charset=utf-8", `{"id":"o-1"}`, ""},
		{"octet-stream", "application/octet-stream", `{"id":"o-1"}`, ""},
		{"JSON that does not parse", "application/json", `{"id":`, "acemq: JSON codec: unexpected end of JSON input"},
		{"no content type, not JSON", "", `id=o-1`, "acemq: JSON codec: invalid character 'i' looking for beginning of value"},
		{"text that is not JSON", "text/plain", `id=o-1`,
			`the body sent as "text/plain" is not JSON: acemq: JSON codec: invalid character 'i' looking for beginning of value`},
		{"bytes that are not JSON", "application/octet-stream", "\x00\x01",
			`the body sent as "application/octet-stream" is not JSON: acemq: JSON codec: invalid character '\x00' looking for beginning of value`},
		{"XML", "application/xml", `{"id":"o-1"}`,
			`the content type "application/xml" is not one a JSON consumer reads (it reads application/json, text/json, */*+json, text/plain in UTF-8, application/octet-stream or none)`},
		{"Latin-1 text", "text/plain; charset=iso-8859-1", `{"id":"o-1"}`,
			`the content type "text/plain; charset=iso-8859-1" is not one a JSON consumer reads (it reads application/json, text/json, */*+json, text/plain in UTF-8, application/octet-stream or none)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o order
			err := decodeBody(JSON, transport.Message{ContentType: tt.contentType, Body: []byte(tt.body)}, &o)
			switch {
			case tt.want == "" && (err != nil || o.ID != "o-1"):
				t.Errorf("decoded %+v, %v, want o-1", o, err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
	// The parse error stays matchable.
	err := decodeBody(JSON, transport.Message{ContentType: "text/plain", Body: []byte("x")}, new(order))
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) {
		t.Errorf("error %v does not wrap a *json.SyntaxError", err)
	}
	// Text reads any text/* (section 8 of the contract), and nothing else.
	var s string
	if err := decodeBody(Text, transport.Message{ContentType: "text/xml", Body: []byte("<a/>")}, &s); err != nil || s != "<a/>" {
		t.Errorf("Text decoded %q, %v", s, err)
	}
	for _, ct := range []string{"application/xml", ""} {
		err := decodeBody(Text, transport.Message{ContentType: ct, Body: []byte("<a/>")}, &s)
		if want := fmt.Sprintf("the content type %q is not one the consumer's codec (text/plain; charset=utf-8) reads", ct); err == nil || err.Error() != want {
			t.Errorf("Text given %q: %v, want %q", ct, err, want)
		}
	}
}

// A composite reads what any member reads, decodes with each member that
// reads the content type until one succeeds, writes as its first, and a body
// none decodes says what every codec tried said.
func TestCodecs(t *testing.T) {
	c := Codecs(JSON, Text, Bytes)
	if c.ContentType() != contract.ContentTypeJSON {
		t.Errorf("ContentType = %q, want the first codec's", c.ContentType())
	}
	var s string
	if err := c.Unmarshal("text/plain", []byte("hi"), &s); err != nil || s != "hi" {
		t.Errorf("text/plain into a string: %q, %v; want Text's after JSON failed", s, err)
	}
	var o struct {
		ID string `json:"id"`
	}
	if err := c.Unmarshal("", []byte(`{"id":"o-1"}`), &o); err != nil || o.ID != "o-1" {
		t.Errorf("no content type: %+v, %v; want JSON's", o, err)
	}
	err := c.Unmarshal("text/plain", []byte("not json"), &o)
	for _, want := range []string{"no codec decoded it: ", "application/json: ", "text/plain; charset=utf-8: ", "application/octet-stream: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a body no codec decodes: %v; want it to say %q", err, want)
		}
	}
	if IsTemporary(err) {
		t.Errorf("%v is marked temporary; no member's error was", err)
	}
	later := Codecs(temporaryCodec{}, Bytes)
	var b []byte
	if err := later.Unmarshal("application/x-later", []byte{1}, &b); err != nil {
		t.Errorf("Bytes after a temporary failure: %v", err)
	}
	if err := Codecs(temporaryCodec{}, Text).Unmarshal("text/plain", []byte{0xff}, &s); !IsTemporary(err) {
		t.Errorf("%v is not temporary, though one member's error was: the message would be parked, not retried", err)
	}
	only := Codecs(Text)
	if only.Reads("application/xml") || !only.Reads("text/csv") {
		t.Error("Codecs(Text) reads what Text does not, or not what it does")
	}
	err = decodeBody(only, transport.Message{ContentType: "application/xml"}, &s)
	if want := `the content type "application/xml" is not one any of its codecs reads (the codecs are text/plain; charset=utf-8)`; err == nil || err.Error() != want {
		t.Errorf("refusal = %v, want %q", err, want)
	}
}

// temporaryCodec reads everything and fails as a store out of reach does.
type temporaryCodec struct{}

func (temporaryCodec) ContentType() string         { return "application/x-later" }
func (temporaryCodec) Reads(string) bool           { return true }
func (temporaryCodec) Marshal(any) ([]byte, error) { return nil, errors.New("not for writing") }
func (temporaryCodec) Unmarshal(string, []byte, any) error {
	return Temporary(errors.New("the store is out of reach"))
}

// readableCodec says what it reads, as codec/yaml's and the others' do.
type readableCodec struct{ textCodec }

func (readableCodec) Readable() string { return "it reads text/x-mine" }

// A refusal names what a codec that says so reads.
func TestDecodeBodyNamesWhatIsRead(t *testing.T) {
	var s string
	err := decodeBody(readableCodec{}, transport.Message{ContentType: "application/json"}, &s)
	if want := `the content type "application/json" is not one the consumer's codec reads (it reads text/x-mine)`; err == nil || err.Error() != want {
		t.Errorf("refusal = %v, want %q", err, want)
	}
}

// DefaultCodec picks by the body's type, as a Publisher without WithCodec.
func TestDefaultCodec(t *testing.T) {
	for body, want := range map[any]Codec{"text": Text, 3: JSON, struct{ A int }{}: JSON} {
		if got := DefaultCodec(body); got != want {
			t.Errorf("DefaultCodec(%#v) = %s, want %s", body, got.ContentType(), want.ContentType())
		}
	}
	if got := DefaultCodec([]byte(nil)); got != Bytes {
		t.Errorf("DefaultCodec([]byte(nil)) = %s, want Bytes", got.ContentType())
	}
	if got := DefaultCodec(nil); got != JSON {
		t.Errorf("DefaultCodec(nil) = %s, want JSON", got.ContentType())
	}
}
