package outbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/acemq-go/acemq/outbox"
)

// A headers column of any text reads as a table or as an ErrBadRecord,
// never a panic; a table read back writes and reads again as itself.
func FuzzDecodeHeaders(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `{"x-acemq-id":"m-1","x-acemq-attempt":1,"x-acemq-first-seen":1740830400000}`,
		`{"f":1.5,"b":true,"n":null,"t":{"k":[1,"a",{"z":2}]}}`, `{"big":123456789012345678901234567890}`,
		`[1]`, `"s"`, `{"a":1}{"b":2}`, `{"a":`, `{"a":[null]}`, `{"e":1e400}`, `{"deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		"{\"\xff\":1}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		h, err := outbox.DecodeHeaders(text)
		if err != nil {
			if !errors.Is(err, outbox.ErrBadRecord) {
				t.Fatalf("DecodeHeaders(%q) = %v; want ErrBadRecord", text, err)
			}
			return
		}
		again, err := outbox.EncodeHeaders(h)
		if err != nil {
			t.Fatalf("the headers %#v read from %q do not write: %v", h, text, err)
		}
		back, err := outbox.DecodeHeaders(again)
		if err != nil || fmt.Sprintf("%#v", back) != fmt.Sprintf("%#v", h) {
			t.Fatalf("%q read as %#v, wrote %q, read back as %#v, %v", text, h, again, back, err)
		}
	})
}

// Any body survives its encoding; any stored body and encoding read back
// or fail with ErrBadRecord, never a panic.
func FuzzBody(f *testing.F) {
	for _, seed := range []struct {
		body     []byte
		text     string
		encoding string
	}{
		{[]byte("hello"), "hello", "text"}, {[]byte{0, 0xff}, "AP8=", "base64"}, {nil, "", "BASE64"},
		{[]byte("é"), "!!", "base64"}, {[]byte("x"), "AP8", "base64"}, {nil, "x", "rot13"}, {nil, "x", ""},
	} {
		f.Add(seed.body, seed.text, seed.encoding)
	}
	f.Fuzz(func(t *testing.T, body []byte, text, encoding string) {
		stored, enc := outbox.EncodeBody(body)
		back, err := outbox.DecodeBody(stored, enc)
		if err != nil || !bytes.Equal(back, body) {
			t.Fatalf("body %q stored as %q (%s) read back as %q, %v", body, stored, enc, back, err)
		}
		if _, err := outbox.DecodeBody(text, encoding); err != nil && !errors.Is(err, outbox.ErrBadRecord) {
			t.Fatalf("DecodeBody(%q, %q) = %v; want ErrBadRecord", text, encoding, err)
		}
	})
}

// A whole row of any columns reads as a message or fails with
// ErrBadRecord.
func FuzzRowMessage(f *testing.F) {
	f.Add("x", "k", "body", "text", "text/plain", `{"x-acemq-id":"m-1"}`)
	f.Add("", "q", "AP8=", "base64", "", `{"x-acemq-id":7}`)
	f.Add("", "q", "body", "utf-8", "", `{`)
	f.Fuzz(func(t *testing.T, exchange, key, body, encoding, contentType, headers string) {
		r := outbox.Row{Exchange: exchange, RoutingKey: key, Body: body, BodyEncoding: encoding, ContentType: contentType, Headers: headers}
		m, err := r.Message()
		if err != nil {
			if !errors.Is(err, outbox.ErrBadRecord) {
				t.Fatalf("%+v: %v; want ErrBadRecord", r, err)
			}
			return
		}
		if !m.Persistent || m.ContentType != contentType || m.Headers == nil {
			t.Fatalf("%+v read as %+v", r, m)
		}
	})
}
