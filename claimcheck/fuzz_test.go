package claimcheck

import (
	"bytes"
	"errors"
	"testing"

	"github.com/acemq-go/acemq"
)

// FuzzParse holds the framing parser and the codec's reading to the rules:
// a framed body is exactly its marker and rest framed again; any other body
// is read by the inner codec as it is; an inline one is its payload; an
// offloaded one is its stored payload or a fatal error, never a temporary
// one from a store that is up. Seeds: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	var store Memory
	known, _ := store.Put(f.Context(), []byte("stored payload"))
	f.Add(frame(0x01, []byte(known)))
	c, err := New(acemq.Bytes, &store)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		marker, rest, framed := parse(body)
		prefixed := len(body) >= 3 && body[0] == 0xAC && body[1] == 0x01 && (body[2] == 0x00 || body[2] == 0x01)
		if framed != prefixed {
			t.Fatalf("parse(% x) framed = %v", body, framed)
		}
		if framed && !bytes.Equal(frame(marker, rest), body) {
			t.Fatalf("parse(% x) = %#x, % x, which frame to % x", body, marker, rest, frame(marker, rest))
		}
		var got []byte
		err := c.Unmarshal("", body, &got)
		switch {
		case !framed:
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("unframed % x read as % x, %v; want it as it is", body, got, err)
			}
		case marker == 0x00:
			if err != nil || !bytes.Equal(got, rest) {
				t.Fatalf("inline % x read as % x, %v", body, got, err)
			}
		case string(rest) == known:
			if err != nil || string(got) != "stored payload" {
				t.Fatalf("the known key read as %q, %v", got, err)
			}
		default:
			if err == nil || acemq.IsTemporary(err) || !acemq.IsFatal(err) ||
				!errors.Is(err, ErrNotFound) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("offloaded % x: %v; want a fatal ErrNotFound or ErrMalformed", body, err)
			}
		}
	})
}
